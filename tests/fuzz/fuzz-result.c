/* libFuzzer target: the payload's result line (the first line of whatever
 * a sandboxed process prints on stdout) and the observation built from
 * that output. Properties (a violation aborts): a parsed result is an
 * object with no real and no integer beyond +-2^53; the observation the
 * bundle records for any output and any result has a canonical form (the
 * bundle can always be written and signed). */
#include "conformance/conformance.h"
#include "conformance/internal.h"
#include "evidence/bundle.h"
#include "evidence/evidence.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void numbers_in_range(const json_t *j)
{
	const json_int_t lim = (json_int_t)1 << 53;
	if (json_is_real(j))
		abort();
	if (json_is_integer(j) && (json_integer_value(j) > lim || json_integer_value(j) < -lim))
		abort();
	const char *k;
	json_t *v;
	if (json_is_object(j))
		json_object_foreach((json_t *)j, k, v) numbers_in_range(v);
	for (size_t i = 0; json_is_array(j) && i < json_array_size(j); i++)
		numbers_in_range(json_array_get(j, i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* runner results are NUL-terminated, with NULs possible inside */
	char *out = malloc(size + 1);
	if (!out)
		return 0;
	memcpy(out, data, size);
	out[size] = '\0';
	json_t *res = cf_payload_result_parse(out, size);
	if (res) {
		if (!json_is_object(res))
			abort();
		numbers_in_range(res);
		(void)cf_result_ok(res);
		(void)cf_result_errno(res);
	}
	struct agsbx_run_result r = { .exited = true, .out = out, .out_len = size, .out_total = size,
				      .err = out, .err_len = size, .err_total = size };
	static const char *const argv[] = { "agsbx-payload", "read", "/etc/x", NULL };
	json_t *obs = agsbx_bundle_observation("sandbox", argv, &r, res);
	size_t len;
	char *canon = obs ? agsbx_json_canonical(obs, NULL, &len) : NULL;
	if (!canon)
		abort();
	free(canon);
	json_decref(obs);
	json_decref(res);
	free(out);
	return 0;
}
