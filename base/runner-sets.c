/* The runner's pid sets: a hashed set of processes keyed by pid (a fork
 * loop's trail can be thousands long) and a plain list of pids. */
#include "base/runner-internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t pid_slot(pid_t pid, size_t cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

struct agsbx_proc *agsbx_procset_find(const struct agsbx_procset *s, pid_t pid)
{
	if (!s->idx_cap)
		return NULL;
	for (size_t h = pid_slot(pid, s->idx_cap); s->idx[h]; h = (h + 1) & (s->idx_cap - 1))
		if (s->v[s->idx[h] - 1].pid == pid)
			return &s->v[s->idx[h] - 1];
	return NULL;
}

static void procset_index(struct agsbx_procset *s, size_t i)
{
	size_t h = pid_slot(s->v[i].pid, s->idx_cap);
	while (s->idx[h])
		h = (h + 1) & (s->idx_cap - 1);
	s->idx[h] = i + 1;
}

int agsbx_procset_add(struct agsbx_procset *s, const struct agsbx_proc *p)
{
	struct agsbx_proc *old = agsbx_procset_find(s, p->pid);
	if (old) {
		*old = *p;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct agsbx_proc *nv = realloc(s->v, cap * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	if ((s->n + 1) * 2 > s->idx_cap) {
		size_t cap = s->idx_cap ? s->idx_cap * 2 : 64;
		size_t *ni = calloc(cap, sizeof *ni);
		if (!ni)
			return -ENOMEM;
		free(s->idx);
		s->idx = ni;
		s->idx_cap = cap;
		for (size_t i = 0; i < s->n; i++)
			procset_index(s, i);
	}
	s->v[s->n] = *p;
	procset_index(s, s->n++);
	return 0;
}

bool agsbx_procset_has(const struct agsbx_procset *s, pid_t pid, unsigned long long start)
{
	const struct agsbx_proc *p = agsbx_procset_find(s, pid);
	return p && p->start == start;
}

void agsbx_procset_clear(struct agsbx_procset *s)
{
	s->n = 0;
	if (s->idx)
		memset(s->idx, 0, s->idx_cap * sizeof *s->idx);
}

void agsbx_procset_free(struct agsbx_procset *s)
{
	free(s->v);
	free(s->idx);
	*s = (struct agsbx_procset){ 0 };
}

int agsbx_pidvec_add(struct agsbx_pidvec *pv, pid_t pid)
{
	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? pv->cap * 2 : 16;
		pid_t *nv = realloc(pv->v, cap * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		pv->v = nv;
		pv->cap = cap;
	}
	pv->v[pv->n++] = pid;
	return 0;
}

/* 0, or -ENOMEM when a pid could not be kept (the list is short). */
int agsbx_pidvec_parse(const char *s, struct agsbx_pidvec *out)
{
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s) {
			s++;
			continue;
		}
		if (v > 0 && agsbx_pidvec_add(out, (pid_t)v) < 0)
			return -ENOMEM;
		s = end;
	}
	return 0;
}
