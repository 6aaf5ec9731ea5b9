#include "base/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void agsbx_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

int agsbx_strv_push(char ***v, size_t *n, char *s)
{
	if (!s)
		return -ENOMEM;
	char **nv = realloc(*v, (*n + 2) * sizeof *nv);
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

static size_t strv_len(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

char **agsbx_strv_dup(const char *const *v)
{
	if (!v)
		return NULL;
	size_t n = strv_len(v);
	char **c = calloc(n + 1, sizeof *c);
	for (size_t i = 0; c && i < n; i++) {
		if (!(c[i] = strdup(v[i]))) {
			agsbx_strv_free(c);
			return NULL;
		}
	}
	return c;
}

const char **agsbx_strv_concat(const char *const *head, const char *const *tail)
{
	size_t nh = strv_len(head), nt = strv_len(tail);
	const char **v = calloc(nh + nt + 1, sizeof *v);
	if (!v)
		return NULL;
	memcpy(v, head, nh * sizeof *v);
	memcpy(v + nh, tail, nt * sizeof *v);
	return v;
}
