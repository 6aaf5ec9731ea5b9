/* libFuzzer target: /proc/self/mountinfo parsing (probes/mountinfo.c).
 * Properties (a violation aborts): a parsed table has a mountpoint and a
 * filesystem type for every entry, and lookups of what was parsed find an
 * entry with that mountpoint. */
#include "probes/internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct agsbx_mount *m = NULL;
	size_t n = 0;
	if (agsbx_mountinfo_parse(text, &m, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			if (!m[i].mountpoint || !m[i].fstype)
				abort();
			const struct agsbx_mount *f = agsbx_mountinfo_find(m, n, m[i].mountpoint);
			if (!f || strcmp(f->mountpoint, m[i].mountpoint) != 0)
				abort();
		}
		(void)agsbx_mountinfo_find(m, n, "/");
		agsbx_mountinfo_free(m, n);
	}
	free(text);
	return 0;
}
