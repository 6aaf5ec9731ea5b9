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

char **agsbx_strv_dup(const char *const *v)
{
	if (!v)
		return NULL;
	size_t n = 0;
	while (v[n])
		n++;
	char **c = calloc(n + 1, sizeof *c);
	for (size_t i = 0; c && i < n; i++) {
		if (!(c[i] = strdup(v[i]))) {
			agsbx_strv_free(c);
			return NULL;
		}
	}
	return c;
}
