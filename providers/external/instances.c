/* The declared providers' instance table and the strings their caps
 * point to. A leaf of providers/external/: it calls nothing else there,
 * so the kinds (session.c, wrap.c, exec.c) and the budget (confine.c)
 * reach it without a call cycle. */
#include "providers/external/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct ext_instance *slots[AGSBX_EXTERNAL_MAX];
static size_t nslots;

int ext_instance_add(struct ext_instance *in)
{
	if (nslots >= AGSBX_EXTERNAL_MAX)
		return -ENOSPC;
	slots[nslots++] = in;
	return 0;
}

size_t agsbx_external_count(void)
{
	return nslots;
}

const struct agsbx_provider_ops *agsbx_external_at(size_t i)
{
	return i < nslots ? &slots[i]->ops : NULL;
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
