/* One whole provider run through the matrix, in-process, as the suites
 * that judge a provider's evidence (test-conformance, test-covA-liars)
 * need it: a context on the suite's build dir and payload, the env canary
 * set, one work dir; and the lookup of one check in the result. Linked
 * into those suites only (tests/CMakeLists.txt). */
#ifndef AGSBX_TESTS_PROVIDER_RUN_H
#define AGSBX_TESTS_PROVIDER_RUN_H

#include <stddef.h>
#include <jansson.h>

#include "providers/provider.h"

struct agsbx_test_run_opts {
	const char *tool_dir, *payload, *work;
	const char *simulate;        /* NULL: none */
	size_t max_output_bytes;
};

/* The provider's record; fails the test (Check) when the matrix cannot run. */
json_t *agsbx_test_run_provider(const struct agsbx_provider_ops *ops, const struct agsbx_test_run_opts *t);

/* The check with that id in a provider record; fails the test if absent. */
const json_t *agsbx_test_check_of(const json_t *prov, const char *id);

#endif
