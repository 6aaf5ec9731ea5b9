/* libFuzzer target: what the Docker daemon answers (hostile to us like any
 * peer). The first byte picks the parser, the rest is the answer:
 *  0: GET /info JSON -> the docker probe facts; every fact must have a
 *     canonical form (the bundle stays writable);
 *  1: POST /images/create's JSON-lines progress stream -> 0 or -EIO;
 *  2: the attach stream framing (8-byte headers) -> demultiplexed stdout
 *     and stderr: the same whatever the read boundaries, each at most cap
 *     bytes, NUL-terminated, total >= kept. */
#include "evidence/evidence.h"
#include "probes/internal.h"
#include "providers/gvisor/docker-api.h"
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void info(const char *d, size_t n)
{
	json_t *j = json_loadb(d, n, JSON_REJECT_DUPLICATES, NULL);
	if (!j)
		return;
	json_t *f = json_object();
	agsbx_docker_info_facts(f, j, "GET /info on unix:///fuzz");
	size_t len;
	char *c = agsbx_json_canonical(f, NULL, &len);
	if (!c)
		abort();
	free(c);
	json_decref(f);
	json_decref(j);
}

static void demux(const char *d, size_t n, size_t cap, size_t step, struct agsbx_run_result *r)
{
	struct gv_demux m;
	gv_demux_init(&m, cap);
	for (size_t off = 0; off < n; off += step)
		gv_demux_feed(&m, d + off, n - off < step ? n - off : step);
	memset(r, 0, sizeof *r);
	gv_demux_take(&m, r);
	gv_demux_clear(&m);
}

static void same_stream(const char *a, size_t al, uint64_t at, bool atr, const char *b, size_t bl, uint64_t bt,
			bool btr, size_t cap)
{
	if (!a || !b || al != bl || at != bt || atr != btr || memcmp(a, b, al) != 0)
		abort();
	if (al > cap || a[al] != '\0' || at < al)
		abort();
}

static void frames(const char *d, size_t n)
{
	if (n < 2)
		return;
	size_t cap = 1 + (unsigned char)d[0] % 64, step = 1 + (unsigned char)d[1] % 16;
	struct agsbx_run_result whole, split;
	demux(d + 2, n - 2, cap, n, &whole);
	demux(d + 2, n - 2, cap, step, &split);
	same_stream(whole.out, whole.out_len, whole.out_total, whole.out_truncated, split.out, split.out_len,
		    split.out_total, split.out_truncated, cap);
	same_stream(whole.err, whole.err_len, whole.err_total, whole.err_truncated, split.err, split.err_len,
		    split.err_total, split.err_truncated, cap);
	free(whole.out);
	free(whole.err);
	free(split.out);
	free(split.err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *d = (const char *)data + 1;
	size_t n = size - 1;
	struct agsbx_error err = { 0 };
	switch (data[0] % 3) {
	case 0: info(d, n); break;
	case 1: {
		int r = gv_image_import_failed(d, n, &err);
		if (r != 0 && r != -EIO)
			abort();
		if ((r == -EIO) != agsbx_error_is_set(&err))
			abort();
		break;
	}
	default: frames(d, n); break;
	}
	return 0;
}
