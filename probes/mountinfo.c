/* /proc/self/mountinfo, proc(5):
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 *   (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)    (10)         (11)
 * Fields 4, 5 and 10 escape space, tab, newline and backslash as \ooo. */
#include "probes/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

/* Copies the field at *p (up to a space or end of line), undoing \ooo. */
static char *take_field(const char **p, const char *end)
{
	const char *s = *p;
	while (s < end && *s == ' ')
		s++;
	const char *e = s;
	while (e < end && *e != ' ')
		e++;
	if (e == s)
		return NULL;
	char *out = malloc((size_t)(e - s) + 1);
	if (!out)
		return NULL;
	size_t n = 0;
	for (const char *c = s; c < e; c++) {
		if (*c == '\\' && e - c >= 4 && c[1] >= '0' && c[1] <= '3' && c[2] >= '0' && c[2] <= '7' &&
		    c[3] >= '0' && c[3] <= '7') {
			out[n++] = (char)((c[1] - '0') * 64 + (c[2] - '0') * 8 + (c[3] - '0'));
			c += 3;
		} else {
			out[n++] = *c;
		}
	}
	out[n] = '\0';
	*p = e;
	return out;
}

static void mount_clear(struct agsbx_mount *m)
{
	free(m->root);
	free(m->mountpoint);
	free(m->fstype);
	free(m->source);
	free(m->super_options);
	memset(m, 0, sizeof *m);
}

static void skip_fields(const char **p, const char *end, int n)
{
	for (int i = 0; i < n; i++) {
		while (*p < end && **p == ' ')
			(*p)++;
		while (*p < end && **p != ' ')
			(*p)++;
	}
}

static int parse_line(const char *line, const char *end, struct agsbx_mount *m)
{
	const char *p = line;
	skip_fields(&p, end, 3);              /* id, parent, major:minor */
	m->root = take_field(&p, end);
	m->mountpoint = take_field(&p, end);
	/* Optional fields end at a lone "-". */
	const char *sep = NULL;
	for (const char *q = p; q + 2 <= end; q++) {
		if (q[0] == ' ' && q[1] == '-' && (q + 2 == end || q[2] == ' ')) {
			sep = q + 2;
			break;
		}
	}
	if (!m->root || !m->mountpoint || !sep)
		return -EINVAL;
	p = sep;
	m->fstype = take_field(&p, end);
	m->source = take_field(&p, end);
	m->super_options = take_field(&p, end);
	if (!m->fstype)
		return -EINVAL;
	/* Some filesystems have an empty source; keep the shape uniform. */
	if (!m->source)
		m->source = strdup("");
	if (!m->super_options)
		m->super_options = strdup("");
	return m->source && m->super_options ? 0 : -ENOMEM;
}

int agsbx_mountinfo_parse(const char *text, struct agsbx_mount **mounts, size_t *n)
{
	struct agsbx_mount *v = NULL;
	size_t cnt = 0, cap = 0;
	int r = 0;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		if (end > line) {
			if (cnt == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct agsbx_mount *nv = realloc(v, nc * sizeof *nv);
				if (!nv) {
					r = -ENOMEM;
					break;
				}
				v = nv;
				cap = nc;
			}
			memset(&v[cnt], 0, sizeof v[cnt]);
			r = parse_line(line, end, &v[cnt]);
			cnt++;
			if (r < 0)
				break;
		}
		line = nl ? nl + 1 : end;
	}
	if (r < 0) {
		agsbx_mountinfo_free(v, cnt);
		return r;
	}
	*mounts = v;
	*n = cnt;
	return 0;
}

int agsbx_mountinfo_read(struct agsbx_mount **mounts, size_t *n)
{
	_cleanup_free_ char *text = NULL;
	int r = agsbx_probes_read("/proc/self/mountinfo", &text);
	if (r < 0)
		return r;
	return agsbx_mountinfo_parse(text, mounts, n);
}

void agsbx_mountinfo_free(struct agsbx_mount *mounts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mount_clear(&mounts[i]);
	free(mounts);
}

const struct agsbx_mount *agsbx_mountinfo_find(const struct agsbx_mount *mounts, size_t n,
					       const char *mountpoint)
{
	/* Later entries are mounted over earlier ones at the same point. */
	for (size_t i = n; i-- > 0;)
		if (strcmp(mounts[i].mountpoint, mountpoint) == 0)
			return &mounts[i];
	return NULL;
}
