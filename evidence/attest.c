/* in-toto Statement v1 with the test-result v0.1 predicate for a bundle
 * (https://in-toto.io/attestation/test-result/v0.1). The subject is the
 * bundle file's sha256 (what `gh attestation verify FILE` hashes); tests are
 * "provider/check" ids; the configuration names the tool that collected the
 * evidence and a digest of the check catalogue it ran. */
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/util.h"

static bool is_hex(const char *s, size_t len)
{
	if (!s || strlen(s) != len)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* sha256 of the sorted, de-duplicated "id axis" lines of every check in
 * the bundle: the catalogue the collecting tool ran, independent of
 * verdicts, host and provider order. */
static int catalogue_digest(const json_t *providers, char hex[65], size_t *count)
{
	size_t n = 0, i, j;
	json_t *p, *c;
	json_array_foreach(providers, i, p)
		n += json_array_size(json_object_get(p, "checks"));
	_cleanup_free_ char **lines = calloc(n ? n : 1, sizeof *lines);
	if (!lines)
		return -ENOMEM;
	size_t k = 0;
	int r = 0;
	json_array_foreach(providers, i, p) {
		json_array_foreach(json_object_get(p, "checks"), j, c) {
			const char *id = json_string_value(json_object_get(c, "id"));
			const char *axis = json_string_value(json_object_get(c, "axis"));
			if (asprintf(&lines[k], "%s %s\n", id ? id : "?", axis ? axis : "?") < 0) {
				r = -ENOMEM;
				goto out;
			}
			k++;
		}
	}
	qsort(lines, k, sizeof *lines, cmp_str);
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	if (!f) {
		r = -ENOMEM;
		goto out;
	}
	*count = 0;
	for (size_t m = 0; m < k; m++) {
		if (m > 0 && strcmp(lines[m], lines[m - 1]) == 0)
			continue;
		fputs(lines[m], f);
		(*count)++;
	}
	fclose(f);
	agsbx_sha256_hex(text ? text : "", tlen, hex);
	free(text);
out:
	for (size_t m = 0; m < k; m++)
		free(lines[m]);
	return r;
}

/* Sorts the check ids into the three lists; returns the overall result. */
static const char *classify(const json_t *providers, json_t *passed, json_t *warned, json_t *failed)
{
	bool any_fail = false, any_warn = false;
	size_t i, j;
	json_t *p, *c;
	json_array_foreach(providers, i, p) {
		const char *pid = json_string_value(json_object_get(p, "id"));
		enum agsbx_provider_verdict pv = agsbx_provider_verdict_of(p);
		if (pv == AGSBX_PROVIDER_DEFECTIVE)
			any_fail = true;
		else if (pv != AGSBX_PROVIDER_CONFORMANT)
			any_warn = true;  /* blocked or skipped: not a defect, not a pass */
		json_array_foreach(json_object_get(p, "checks"), j, c) {
			const char *cid = json_string_value(json_object_get(c, "id"));
			const char *v = json_string_value(json_object_get(c, "verdict"));
			char *name = NULL;
			if (!cid || !v || asprintf(&name, "%s/%s", pid ? pid : "?", cid) < 0)
				continue;
			/* not_claimed: the provider does not claim the axis; neither
			 * a pass nor a warning nor a failure, so in no list. */
			switch (agsbx_check_verdict_parse(v)) {
			case AGSBX_CHECK_PASS:
				json_array_append_new(passed, json_string(name));
				break;
			case AGSBX_CHECK_FAIL:
				json_array_append_new(failed, json_string(name)), any_fail = true;
				break;
			case AGSBX_CHECK_NOT_CLAIMED:
				break;
			default:
				json_array_append_new(warned, json_string(name)), any_warn = true;
			}
			free(name);
		}
	}
	return any_fail ? "FAILED" : any_warn ? "WARNED" : "PASSED";
}

static json_t *tool_descriptor(const json_t *tool)
{
	const char *version = json_string_value(json_object_get(tool, "version"));
	const char *commit = json_string_value(json_object_get(tool, "git_commit"));
	const char *bin = json_string_value(json_object_get(tool, "binary_sha256"));
	json_t *digest = json_object();
	if (is_hex(bin, 64))
		json_object_set_new(digest, "sha256", json_string(bin));
	if (is_hex(commit, 40))
		json_object_set_new(digest, "gitCommit", json_string(commit));
	char uri[160];
	snprintf(uri, sizeof uri, "pkg:generic/agsbx-evidence@%s", version ? version : "unknown");
	return json_pack("{s:s, s:s, s:o, s:{s:s?}}", "name", "agsbx-evidence", "uri", uri, "digest", digest,
			 "annotations", "version", version);
}

static json_t *attest_buf(const json_t *bundle, const struct agsbx_attest_opts *o, char *err, size_t err_size)
{
	if (!is_hex(o->bundle_sha256, 64)) {
		snprintf(err, err_size, "bundle digest is not a sha256");
		return NULL;
	}
	const json_t *providers = json_object_get(bundle, "providers");
	if (!json_is_array(providers)) {
		snprintf(err, err_size, "bundle has no providers array");
		return NULL;
	}
	char cat[65];
	size_t ncheck = 0;
	if (catalogue_digest(providers, cat, &ncheck) < 0) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	json_t *passed = json_array(), *warned = json_array(), *failed = json_array();
	const char *result = classify(providers, passed, warned, failed);
	json_t *config = json_pack("[o, {s:s, s:{s:s}, s:{s:I}}]",
				   tool_descriptor(json_object_get(bundle, "tool")),
				   "name", "check-catalogue", "digest", "sha256", cat,
				   "annotations", "checks", (json_int_t)ncheck);
	json_t *pred = json_pack("{s:s, s:o, s:o, s:o, s:o}", "result", result, "configuration", config,
				 "passedTests", passed, "warnedTests", warned, "failedTests", failed);
	if (pred && o->url)
		json_object_set_new(pred, "url", json_string(o->url));
	json_t *st = json_pack("{s:s, s:[{s:s, s:{s:s}}], s:s, s:o}", "_type", AGSBX_INTOTO_STATEMENT,
			       "subject", "name", o->bundle_name ? o->bundle_name : "_", "digest", "sha256",
			       o->bundle_sha256, "predicateType", AGSBX_INTOTO_TEST_RESULT, "predicate", pred);
	if (!st)
		snprintf(err, err_size, "out of memory");
	return st;
}

json_t *agsbx_bundle_attest(const json_t *bundle, const struct agsbx_attest_opts *o, struct agsbx_error *e)
{
	char err[512] = "";
	json_t *a = attest_buf(bundle, o, err, sizeof err);
	if (!a)
		ev_error(e, -EINVAL, err);
	return a;
}
