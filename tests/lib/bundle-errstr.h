/* The bundle loaders and verify with their error record's message copied
 * into a buffer: test-verify-stream.c and fuzz-bundle.c compare the two
 * readers' messages as strings. */
#ifndef AGSBX_TESTS_BUNDLE_ERRSTR_H
#define AGSBX_TESTS_BUNDLE_ERRSTR_H

#include <stdio.h>

#include "base/error.h"
#include "evidence/evidence.h"

static inline int parse_stream(const char *d, size_t n, json_t **b, uint8_t *sha, bool *ok, char *err, size_t size)
{
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_parse_verify(d, n, b, sha, ok, &e);
	snprintf(err, size, "%s", e.message);
	return r;
}
static inline int parse_tree(const char *d, size_t n, json_t **b, uint8_t *sha, bool *ok, char *err, size_t size)
{
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_parse_digest(d, n, b, sha, ok, &e);
	snprintf(err, size, "%s", e.message);
	return r;
}
static inline int parse_str(const char *d, size_t n, json_t **b, char *err, size_t size)
{
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_parse(d, n, b, &e);
	snprintf(err, size, "%s", e.message);
	return r;
}
static inline int verify_str(const json_t *b, const struct agsbx_verify_opts *o, struct agsbx_verify_result *res, char *err,
		      size_t size)
{
	struct agsbx_error e = { 0 };
	int r = agsbx_bundle_verify(b, o, res, &e);
	snprintf(err, size, "%s", e.message);
	return r;
}

#endif
