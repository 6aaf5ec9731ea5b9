/* Declared providers: parsing and validating `ID=COMMAND`, the instance
 * table, and the per-slot entry points (probe and ensure receive no ops
 * pointer, so each slot has its own pair that knows its instance). */
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

static struct ext_instance *slots[AGSBX_EXTERNAL_MAX];
static size_t nslots;

struct ext_instance *ext_instance_of(const struct agsbx_provider_ops *ops)
{
	for (size_t i = 0; i < nslots; i++)
		if (&slots[i]->ops == ops)
			return slots[i];
	return NULL;
}

const char *ext_intern(struct ext_instance *in, const char *s)
{
	pthread_mutex_lock(&in->lock);
	const char *found = NULL;
	for (size_t i = 0; i < in->ninterned && !found; i++)
		if (strcmp(in->interned[i], s) == 0)
			found = in->interned[i];
	if (!found) {
		char **v = realloc(in->interned, (in->ninterned + 1) * sizeof *v);
		char *c = v ? strdup(s) : NULL;
		if (v)
			in->interned = v;
		if (c)
			found = in->interned[in->ninterned++] = c;
	}
	pthread_mutex_unlock(&in->lock);
	return found ? found : "unknown";
}

size_t agsbx_external_count(void)
{
	return nslots;
}

const struct agsbx_provider_ops *agsbx_external_at(size_t i)
{
	return i < nslots ? &slots[i]->ops : NULL;
}

const char *agsbx_external_kind(const struct agsbx_provider_ops *ops)
{
	struct ext_instance *in = ext_instance_of(ops);
	return !in ? NULL : in->wrap ? "wrap" : "external";
}

/* ---- per-slot entry points ---- */

static int slot_probe(size_t n, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	struct ext_instance *in = slots[n];
	return in->wrap ? ext_wrap_probe(in, ctx, out) : ext_adapter_probe(in, ctx, out);
}

static int slot_ensure(size_t n, const struct agsbx_ctx *ctx, const struct agsbx_grant *g, struct agsbx_handle **out,
		       struct agsbx_error *fail)
{
	struct ext_instance *in = slots[n];
	return in->wrap ? ext_wrap_ensure(in, ctx, g, out, fail) : ext_adapter_ensure(in, ctx, g, out, fail);
}

#define SLOT(n)                                                                                                   \
	static int probe_##n(const struct agsbx_ctx *c, struct agsbx_probe *o) { return slot_probe(n, c, o); }    \
	static int ensure_##n(const struct agsbx_ctx *c, const struct agsbx_grant *g, struct agsbx_handle **h,    \
			      struct agsbx_error *f) { return slot_ensure(n, c, g, h, f); }
SLOT(0) SLOT(1) SLOT(2) SLOT(3) SLOT(4) SLOT(5) SLOT(6) SLOT(7)
SLOT(8) SLOT(9) SLOT(10) SLOT(11) SLOT(12) SLOT(13) SLOT(14) SLOT(15)
#undef SLOT

static const struct {
	int (*probe)(const struct agsbx_ctx *, struct agsbx_probe *);
	int (*ensure)(const struct agsbx_ctx *, const struct agsbx_grant *, struct agsbx_handle **,
		      struct agsbx_error *);
} slot_fns[AGSBX_EXTERNAL_MAX] = {
	{ probe_0, ensure_0 }, { probe_1, ensure_1 }, { probe_2, ensure_2 }, { probe_3, ensure_3 },
	{ probe_4, ensure_4 }, { probe_5, ensure_5 }, { probe_6, ensure_6 }, { probe_7, ensure_7 },
	{ probe_8, ensure_8 }, { probe_9, ensure_9 }, { probe_10, ensure_10 }, { probe_11, ensure_11 },
	{ probe_12, ensure_12 }, { probe_13, ensure_13 }, { probe_14, ensure_14 }, { probe_15, ensure_15 },
};

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

static int declare_error(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int declare_error(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
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
	in->ops.probe = slot_fns[nslots].probe;
	in->ops.ensure = slot_fns[nslots].ensure;
	return in;
}

int agsbx_external_declare(const char *decl, bool wrap, char *err, size_t err_size)
{
	const char *flag = wrap ? "--wrap" : "--adapter";
	const char *eq = strchr(decl, '=');
	if (!eq)
		return declare_error(err, err_size, "%s: expected ID=%s, got '%s'", flag, wrap ? "TEMPLATE" : "COMMAND", decl);
	size_t idlen = (size_t)(eq - decl);
	if (!id_valid(decl, idlen))
		return declare_error(err, err_size, "%s: id '%.*s' does not match [a-z][a-z0-9_-]{0,31}", flag, (int)idlen,
				     decl);
	_cleanup_free_ char *id = strndup(decl, idlen);
	if (!id)
		return -ENOMEM;
	if (agsbx_provider_find(id))
		return declare_error(err, err_size, "%s: id '%s' is already a provider", flag, id);
	if (nslots >= AGSBX_EXTERNAL_MAX)
		return declare_error(err, err_size, "%s: at most %d declared providers", flag, AGSBX_EXTERNAL_MAX);
	char **argv = NULL;
	int n = agsbx_split_words(eq + 1, &argv);
	if (n < 0)
		return declare_error(err, err_size, "%s %s: unterminated quote or trailing backslash", flag, id);
	if (n == 0) {
		free(argv);
		return declare_error(err, err_size, "%s %s: empty %s", flag, id, wrap ? "template" : "command");
	}
	for (int i = 0; i < n && !wrap; i++)
		absolutize(&argv[i]);
	struct ext_instance *in = instance_new(id, idlen, eq + 1, wrap, argv, (size_t)n);
	if (!in)
		return -ENOMEM;
	slots[nslots++] = in;
	agsbx_provider_register_extra(&in->ops);
	if (agsbx_provider_find(id) != &in->ops)
		return declare_error(err, err_size, "%s %s: too many providers", flag, id);
	return 0;
}

int agsbx_external_configure(const struct agsbx_provider_ops *ops, const json_t *config, char *err, size_t err_size)
{
	struct ext_instance *in = ext_instance_of(ops);
	if (!in || !in->wrap)
		return 0;
	return ext_wrap_configure(in, config, err, err_size);
}
