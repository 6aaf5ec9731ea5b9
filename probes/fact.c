/* The small file readers every family uses (the fact objects are
 * base/fact.c). */
#include "probes/internal.h"
#include "probes/probes.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/compat.h"
#include "base/util.h"

#define SMALL_FILE_MAX (1u << 20)

int agsbx_probes_read(const char *path, char **data)
{
	return agsbx_read_file(path, SMALL_FILE_MAX, data, NULL);
}

static char *first_line(const char *path, int *err)
{
	char *data = NULL;
	int r = agsbx_probes_read(path, &data);
	if (r < 0) {
		*err = r;
		return NULL;
	}
	data[strcspn(data, "\n")] = '\0';
	return data;
}

json_t *agsbx_fact_file_line(const char *path)
{
	int err = 0;
	_cleanup_free_ char *line = first_line(path, &err);
	if (!line)
		return agsbx_fact_errno(err, path);
	return agsbx_fact_string(line, path);
}

/* Strict decimal: optional sign, digits, surrounding blanks; no junk. */
static int parse_ll(const char *s, long long *v)
{
	char *end = NULL;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -EINVAL;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	*v = x;
	return 0;
}

json_t *agsbx_fact_file_int(const char *path)
{
	int err = 0;
	_cleanup_free_ char *line = first_line(path, &err);
	if (!line)
		return agsbx_fact_errno(err, path);
	long long v;
	if (parse_ll(line, &v) < 0)
		return agsbx_fact_detail(agsbx_fact_absent("unparsable", path), line);
	return agsbx_fact_int(v, path);
}

json_t *agsbx_fact_file_bool(const char *path)
{
	int err = 0;
	_cleanup_free_ char *line = first_line(path, &err);
	if (!line)
		return agsbx_fact_errno(err, path);
	const char *s = line;
	while (isspace((unsigned char)*s))
		s++;
	if (strcmp(s, "Y") == 0 || strcmp(s, "y") == 0 || strcmp(s, "1") == 0)
		return agsbx_fact_bool(true, path);
	if (strcmp(s, "N") == 0 || strcmp(s, "n") == 0 || strcmp(s, "0") == 0)
		return agsbx_fact_bool(false, path);
	return agsbx_fact_detail(agsbx_fact_absent("unparsable", path), line);
}

/* The host object's lookup lives beside the fact readers: the advisories
 * (derived from other families) and the fuzz targets use it without the
 * families themselves. */
const json_t *agsbx_probe_value(const json_t *host, const char *family, const char *name)
{
	if (!host || !family || !name)
		return NULL;
	const json_t *fact = json_object_get(json_object_get(host, family), name);
	if (!json_is_object(fact) || json_is_true(json_object_get(fact, "absent")))
		return NULL;
	return json_object_get(fact, "value");
}
