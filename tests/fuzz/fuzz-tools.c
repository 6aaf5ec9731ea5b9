/* libFuzzer target: what the tools we run print, as the probes and
 * --subject-repo read it (a tool on $PATH or a repository's git
 * configuration is outside input). The first byte picks the parser, the
 * rest is the output:
 *  0: `bwrap --version`, 1: `runsc --version` -> the version and
 *     version_line facts (one line; the version a tail of the line);
 *  2: `bwrap --help` -> the options fact: an option is known only when
 *     the text names it;
 *  3: `git config --name-only -z --get-regexp ^filter\.` -> the settings
 *     that switch every named filter driver off: four per name with a
 *     subsection, whatever bytes the name holds (one missing would let
 *     `git status` run the repository's filter program);
 *  4: the rev-parse lines and `git status --porcelain` output (split at
 *     NUL bytes: top, branch, commit, status; a missing part: unborn)
 *     -> the subject; dirty exactly when status printed anything.
 * Every fact and the subject must be values the bundle can hold. */
#include "base/util.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"
#include "probes/internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void bundlable(const json_t *j)
{
	size_t len;
	char *c = agsbx_json_canonical(j, NULL, &len);
	if (!c || agsbx_json_unbundlable(j, 1, 32))
		abort();
	free(c);
}

static const char *value_of(const json_t *f, const char *name)
{
	return json_string_value(json_object_get(json_object_get(f, name), "value"));
}

static void version(char *out, const char *prefix)
{
	json_t *f = json_object();
	agsbx_probes_version_parse(f, out, prefix, "fuzz --version");
	bundlable(f);
	const char *v = value_of(f, "version"), *line = value_of(f, "version_line");
	if (!v != !line || (line && (strchr(line, '\n') || strlen(v) > strlen(line) ||
				     strcmp(line + strlen(line) - strlen(v), v) != 0)))
		abort();
	json_decref(f);
}

static void help(const char *text)
{
	json_t *fact = agsbx_bwrap_options_fact(text, "bwrap --help");
	json_t *f = json_object();
	agsbx_fact_put(f, "options", fact);
	bundlable(f);
	const char *opt;
	json_t *known;
	json_object_foreach(json_object_get(fact, "value"), opt, known)
		if (!json_is_boolean(known) || (json_is_true(known) && !strstr(text, opt)))
			abort();
	json_decref(f);
}

static void filters(const char *names)
{
	size_t want = 0;
	for (const char *k = names; *k; k += strlen(k) + 1) {
		const char *dot = strrchr(k, '.');
		want += dot && dot - k > 7;
	}
	json_t *a = ev_filter_settings(names);
	if (!a || json_array_size(a) != 4 * want)
		abort();
	size_t i;
	json_t *s;
	json_array_foreach(a, i, s)
		if (!json_string_value(s) || !strchr(json_string_value(s), '='))
			abort();
	json_decref(a);
}

static void subject(const char *d, size_t n)
{
	const char *part[4] = { NULL };
	for (size_t i = 0, off = 0; i < 4 && off <= n; i++) {
		part[i] = d + off;
		off += strlen(d + off) + 1;
	}
	json_t *s = ev_subject_json(part[0] ? part[0] : "/", part[1], part[2], part[3] ? part[3] : "");
	if (!s)
		abort();
	bundlable(s);
	if (json_is_true(json_object_get(s, "dirty")) != (part[3] && *part[3]))
		abort();
	json_decref(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t n = size - 1;
	/* as the runner hands it over: NUL-terminated, plus one more NUL
	 * ending a -z list (evidence/subject.c's git()) */
	char *d = malloc(n + 2);
	if (!d)
		return 0;
	memcpy(d, data + 1, n);
	d[n] = d[n + 1] = '\0';
	switch (data[0] % 5) {
	case 0: version(d, "bubblewrap "); break;
	case 1: version(d, "runsc version "); break;
	case 2: help(d); break;
	case 3: filters(d); break;
	default: subject(d, n); break;
	}
	free(d);
	return 0;
}
