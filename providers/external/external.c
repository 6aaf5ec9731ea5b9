/* Declared providers: parsing and validating `ID=COMMAND` into an
 * instance whose ops are its kind's template (every op finds the instance
 * from self or h->ops: ext_instance_of). */
#include "providers/external/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/util.h"

/* ---- declaring ---- */

static bool id_valid(const char *id, size_t len)
{
	if (len < 1 || len > 32 || id[0] < 'a' || id[0] > 'z')
		return false;
	for (size_t i = 1; i < len; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9') || id[i] == '_' || id[i] == '-'))
			return false;
	return true;
}

static int declare_error(struct agsbx_error *fail, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int declare_error(struct agsbx_error *fail, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	agsbx_error_vset(fail, "config_invalid", fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The adapter starts in a fresh empty directory, so a word that names an
 * existing path relative to where collect was started (a script, a
 * checkout) is made absolute; the bundle records the argv as run. */
static int absolutize(char **word)
{
	const char *w = *word;
	const char *eq = w[0] == '-' ? strchr(w, '=') : NULL;
	const char *path = eq ? eq + 1 : w;
	struct stat st;
	if (path[0] == '/' || !strchr(path, '/') || stat(path, &st) < 0)
		return 0;
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return 0;
	char *abs = NULL;
	if (asprintf(&abs, "%.*s%s/%s", (int)(path - w), w, cwd, path) < 0)
		return -ENOMEM;
	free(*word);
	*word = abs;
	return 0;
}

static struct ext_instance *instance_new(const char *id, size_t idlen, const char *cmd, bool wrap, char **argv,
					 size_t argc)
{
	struct ext_instance *in = calloc(1, sizeof *in);
	if (!in)
		return NULL;
	memcpy(in->id, id, idlen);
	in->wrap = wrap;
	in->decl = strdup(cmd);
	in->argv = argv;
	in->argc = argc;
	pthread_mutex_init(&in->lock, NULL);
	in->ops = wrap ? ext_wrap_ops_template : ext_adapter_ops_template;
	in->ops.id = in->id;
	return in;
}

int agsbx_external_declare(const char *decl, bool wrap, struct agsbx_error *fail)
{
	const char *flag = wrap ? "--wrap" : "--adapter";
	const char *eq = strchr(decl, '=');
	if (!eq)
		return declare_error(fail, "%s: expected ID=%s, got '%s'", flag, wrap ? "TEMPLATE" : "COMMAND", decl);
	size_t idlen = (size_t)(eq - decl);
	if (!id_valid(decl, idlen))
		return declare_error(fail, "%s: id '%.*s' does not match [a-z][a-z0-9_-]{0,31}", flag, (int)idlen,
				     decl);
	_cleanup_free_ char *id = strndup(decl, idlen);
	if (!id)
		return -ENOMEM;
	if (agsbx_provider_find(id))
		return declare_error(fail, "%s: id '%s' is already a provider", flag, id);
	if (agsbx_external_count() >= AGSBX_EXTERNAL_MAX)
		return declare_error(fail, "%s: at most %d declared providers", flag, AGSBX_EXTERNAL_MAX);
	char **argv = NULL;
	int n = agsbx_split_words(eq + 1, &argv);
	if (n < 0)
		return declare_error(fail, "%s %s: unterminated quote or trailing backslash", flag, id);
	if (n == 0) {
		free(argv);
		return declare_error(fail, "%s %s: empty %s", flag, id, wrap ? "template" : "command");
	}
	for (int i = 0; i < n && !wrap; i++)
		absolutize(&argv[i]);
	struct ext_instance *in = instance_new(id, idlen, eq + 1, wrap, argv, (size_t)n);
	if (!in)
		return -ENOMEM;
	ext_instance_add(in);
	agsbx_provider_register_extra(&in->ops);
	if (agsbx_provider_find(id) != &in->ops)
		return declare_error(fail, "%s %s: too many providers", flag, id);
	return 0;
}
