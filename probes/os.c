/* os: os-release(5). /etc/os-release, falling back to /usr/lib/os-release
 * as the format's own documentation says. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

static const struct {
	const char *key;
	const char *fact;
} os_keys[] = {
	{ "ID", "id" },
	{ "VERSION_ID", "version_id" },
	{ "PRETTY_NAME", "pretty_name" },
	{ "VERSION_CODENAME", "version_codename" },
	{ "ID_LIKE", "id_like" },
};

/* Shell-like unquoting of one os-release value: "..." with backslash
 * escapes, '...' literal, or a bare word. Writes into v (in place). */
static void unquote(char *v)
{
	char *w = v;
	const char *r = v;
	char q = (*r == '"' || *r == '\'') ? *r++ : 0;
	for (; *r; r++) {
		if (q && *r == q)
			break;
		if (q == '"' && *r == '\\' && r[1] && strchr("\"\\$`", r[1]))
			r++;
		*w++ = *r;
	}
	*w = '\0';
}

/* Value of KEY in os-release text (malloc'd) or NULL. */
static char *os_release_get(const char *text, const char *key)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == '=') {
			char *v = strndup(line + klen + 1, len - klen - 1);
			if (v)
				unquote(v);
			return v;
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

json_t *agsbx_probe_os(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	const char *path = "/etc/os-release";
	_cleanup_free_ char *text = NULL;
	int r = agsbx_probes_read(path, &text);
	if (r == -ENOENT) {
		path = "/usr/lib/os-release";
		r = agsbx_probes_read(path, &text);
	}
	for (size_t i = 0; i < sizeof os_keys / sizeof os_keys[0]; i++) {
		if (r < 0) {
			agsbx_fact_put(f, os_keys[i].fact, agsbx_fact_errno(r, path));
			continue;
		}
		_cleanup_free_ char *v = os_release_get(text, os_keys[i].key);
		agsbx_fact_put(f, os_keys[i].fact,
			       v ? agsbx_fact_string(v, path) : agsbx_fact_absent("not_set", path));
	}
	return f;
}
