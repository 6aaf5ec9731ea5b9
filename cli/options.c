/* One option parser for every command: getopt_long with the short-option
 * string derived from the table; options may follow operands (as they
 * always could, whatever POSIXLY_CORRECT says: getopt's return-in-order
 * mode, not its permutation); "--" ends the options; and one wording for
 * every usage error, so no command words its own. */
#include "cli/commands.h"

#include <ctype.h>
#include <getopt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/evidence.h"

/* What a key stands for: a long option's val, or a short_only letter. */
static bool known_key(const struct option *lo, const char *short_only, int key)
{
	for (; lo->name; lo++)
		if (lo->val == key)
			return true;
	return key > 0 && key < 256 && short_only && strchr(short_only, key);
}

/* The option getopt refused, as typed: "--name" (without "=VALUE") or
 * "-c". A short option's letter comes from optopt, never from argv: in a
 * cluster ("-qZ") optind has not moved past the element yet. Sets
 * *long_given_value for a long flag given "=VALUE" (getopt says '?' with
 * that flag's key in optopt). */
static void bad_option(const struct agsbx_args *a, const struct option *lo, int c, char *buf, size_t size,
		       bool *long_given_value)
{
	const char *arg = a->argv[optind - 1];
	bool is_long = c == ':' ? strncmp(arg, "--", 2) == 0 : !optopt || known_key(lo, a->short_only, optopt);
	*long_given_value = c == '?' && optopt && is_long;
	if (is_long)
		snprintf(buf, size, "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(buf, size, "-%c", isprint(optopt) ? optopt : '?');
}

/* How many long options start with what was typed ("--allow" is two). */
static int prefix_matches(const struct option *lo, const char *typed)
{
	int n = 0;
	if (strncmp(typed, "--", 2) != 0)
		return 0;
	for (; lo->name; lo++)
		n += strncmp(lo->name, typed + 2, strlen(typed + 2)) == 0;
	return n;
}

/* Optimal-string-alignment distance (insert, delete, substitute, swap two
 * neighbours), capped: names are short, anything past 63 is "far". */
int agsbx_edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 63 || m > 63)
		return 64;
	int d[64][64];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			v = d[i - 1][j] + 1 < v ? d[i - 1][j] + 1 : v;
			v = d[i][j - 1] + 1 < v ? d[i][j - 1] + 1 : v;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[n][m];
}

/* A typo's likely intent: the one closest name within 2 edits (and
 * closer than a third of its length), else NULL. */
const char *agsbx_closest(const char *typed, const char *const *names, size_t count)
{
	const char *best = NULL;
	int best_d = 3, ties = 0;
	for (size_t i = 0; i < count; i++) {
		int dist = agsbx_edit_distance(typed, names[i]);
		if (dist * 3 > (int)strlen(names[i]) || dist > best_d)
			continue;
		ties = dist == best_d ? ties + 1 : 1;
		best_d = dist;
		best = names[i];
	}
	return ties == 1 ? best : NULL;
}

/* " (did you mean '--NAME'?)" for a mistyped long option, else "". */
static void option_suggestion(const struct option *lo, const char *typed, char *buf, size_t size)
{
	const char *names[128];
	size_t n = 0;
	buf[0] = '\0';
	if (strncmp(typed, "--", 2) != 0)
		return;
	for (; lo->name && n < 128; lo++)
		names[n++] = lo->name;
	const char *best = agsbx_closest(typed + 2, names, n);
	if (best)
		snprintf(buf, size, " (did you mean '--%s'?)", best);
}

static void short_options(const struct option *lo, const char *short_only, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "-:%s", short_only ? short_only : "");
	/* '-': operands come back in order as 1; ':': a missing value is ':' */
	for (; lo->name && n + 3 < size; lo++) {
		if (lo->val <= 0 || lo->val >= 256 || !isalnum(lo->val))
			continue;
		buf[n++] = (char)lo->val;
		if (lo->has_arg == required_argument)
			buf[n++] = ':';
	}
	buf[n] = '\0';
}

int agsbx_args_next(struct agsbx_args *a, const struct option *lo)
{
	char shorts[64];
	short_options(lo, a->short_only, shorts, sizeof shorts);
	if (!a->started) {
		optind = 0; /* a full re-initialisation: a command may parse twice */
		opterr = 0;
		a->started = true;
		a->operands = a->argv + 1;
	}
	int c;
	/* Operands are compacted to argv[1..]: every slot written was
	 * consumed already, and return-in-order never looks back. */
	while ((c = getopt_long(a->argc, a->argv, shorts, lo, NULL)) == 1)
		a->operands[a->noperands++] = optarg;
	a->value = optarg;
	if (c == -1) {
		while (optind < a->argc) /* after "--" */
			a->operands[a->noperands++] = a->argv[optind++];
		return 0;
	}
	if (c != ':' && c != '?')
		return c;
	char name[128];
	bool given_value;
	bad_option(a, lo, c, name, sizeof name, &given_value);
	if (c == ':')
		agsbx_usage_error(a->cmd, "option '%s' needs a value", name);
	else if (given_value)
		agsbx_usage_error(a->cmd, "option '%s' takes no value", name);
	else if (prefix_matches(lo, name) > 1)
		agsbx_usage_error(a->cmd, "ambiguous option '%s'", name);
	else {
		char hint[160];
		option_suggestion(lo, name, hint, sizeof hint);
		agsbx_usage_error(a->cmd, "unknown option '%s'%s", name, hint);
	}
	return -1;
}

int agsbx_args_operands(const struct agsbx_args *a, int min, int max, const char *too_few, const char *too_many)
{
	if (a->noperands < min)
		return agsbx_usage_error(a->cmd, "%s", too_few);
	if (a->noperands > max && too_many)
		return agsbx_usage_error(a->cmd, "%s", too_many);
	if (a->noperands > max)
		return agsbx_usage_error(a->cmd, "unexpected argument '%s'", a->operands[max]);
	return 0;
}

int agsbx_check_format(const char *cmd, const char *format, const char *const *known)
{
	char list[256] = "";
	for (size_t i = 0; known[i]; i++) {
		if (strcmp(format, known[i]) == 0)
			return 0;
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", known[i]);
	}
	return agsbx_usage_error(cmd, "unknown format '%s' (known: %s)", format, list);
}

bool agsbx_trust_option(int key, const char *value, struct agsbx_verify_opts *o)
{
	switch (key) {
	case AGSBX_OPT_KEY: o->key_path = value; return true;
	case AGSBX_OPT_ALLOWED_SIGNERS: o->allowed_signers = value; return true;
	case AGSBX_OPT_IDENTITY: o->identity = value; return true;
	case AGSBX_OPT_KEYS_URL: o->keys_url = value; return true;
	case AGSBX_OPT_INSECURE_URL: o->allow_insecure_url = true; return true;
	default: return false;
	}
}

int agsbx_parse_count(const char *cmd, const char *flag, const char *s, long long min, long long max, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || !*s || *end || v < min || v > max)
		return agsbx_usage_error(cmd, "%s: expected an integer in [%lld, %lld], got '%s'", flag, min, max, s);
	*out = v;
	return 0;
}
