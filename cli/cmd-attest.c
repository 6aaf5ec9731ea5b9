/* attest BUNDLE [-o FILE] [--url URL] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "base/util.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char agsbx_help_attest[] =
	"usage: agsbx-evidence attest BUNDLE [-o FILE] [--url URL]\n"
	"\n"
	"Prints an in-toto Statement v1 about the bundle with the test-result predicate\n"
	"(" AGSBX_INTOTO_TEST_RESULT "): subject = the bundle file's sha256;\n"
	"result FAILED (a defective provider or failing check), WARNED (a blocked or skipped\n"
	"provider or check) or PASSED; passedTests/warnedTests/failedTests = provider/check ids\n"
	"(not_claimed checks are in none); configuration = the collecting tool (version,\n"
	"binary sha256, git commit) and the sha256 of its check catalogue. Sign and publish\n"
	"it with actions/attest (predicate-path: the statement's .predicate) or cosign.\n"
	"\n"
	"  -o, --output FILE      write the statement to FILE ('-' or none: stdout)\n"
	"  --url URL              the test run (default: the GitHub Actions run from\n"
	"                         GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID)\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 written, 2 bad usage or not a bundle, 3 I/O error\n"
	"\n"
	"example: agsbx-evidence attest evidence.json -o evidence.intoto.json\n";

/* The GitHub Actions run when the environment names one. */
static char *ci_run_url(void)
{
	const char *server = getenv("GITHUB_SERVER_URL"), *repo = getenv("GITHUB_REPOSITORY");
	const char *run = getenv("GITHUB_RUN_ID"), *attempt = getenv("GITHUB_RUN_ATTEMPT");
	if (!server || !repo || !run || !*server || !*repo || !*run)
		return NULL;
	if (strspn(run, "0123456789") != strlen(run) || (attempt && strspn(attempt, "0123456789") != strlen(attempt)))
		return NULL;
	char *u = NULL;
	if (attempt && *attempt)
		return asprintf(&u, "%s/%s/actions/runs/%s/attempts/%s", server, repo, run, attempt) < 0 ? NULL : u;
	return asprintf(&u, "%s/%s/actions/runs/%s", server, repo, run) < 0 ? NULL : u;
}

static bool plausible_url(const char *u)
{
	if (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0)
		return false;
	for (const char *p = u; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return false;
	return true;
}

static int parse(int argc, char **argv, const char **file, const char **out, const char **url)
{
	enum { O_URL = AGSBX_OPT_LOCAL };
	static const struct option lo[] = { AGSBX_OPTION_OUTPUT, { "url", required_argument, NULL, O_URL }, { 0 } };
	struct agsbx_args a = { .cmd = "attest", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0) {
		if (c == 'o')
			*out = a.value;
		else
			*url = a.value;
	}
	if (c < 0)
		return AGSBX_EXIT_USAGE;
	int rc = agsbx_args_operands(&a, 1, 1, "no bundle given", "one bundle at a time");
	if (rc)
		return rc;
	*file = a.operands[0];
	if (*url && !plausible_url(*url))
		return agsbx_usage_error("attest", "--url: expected an http(s) URL without blanks");
	return 0;
}

int agsbx_cmd_attest(int argc, char **argv)
{
	const char *file = NULL, *out = "-", *url = NULL;
	int rc = parse(argc, argv, &file, &out, &url);
	if (rc)
		return rc;
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	struct agsbx_error e = { 0 };
	int r = agsbx_read_file(file, AGSBX_BUNDLE_MAX_BYTES, &data, &len);
	if (r < 0) {
		agsbx_error_errno(r, "cannot read %s", file);
		return AGSBX_EXIT_USAGE;
	}
	_cleanup_json_ json_t *bundle = NULL;
	if (agsbx_bundle_parse(data, len, &bundle, &e) < 0) {
		agsbx_error("%s: %s", file, e.message);
		return AGSBX_EXIT_USAGE;
	}
	char hex[65];
	agsbx_sha256_hex(data, len, hex);
	_cleanup_free_ char *copy = strdup(file), *env_url = url ? NULL : ci_run_url();
	struct agsbx_attest_opts o = { .bundle_name = copy ? basename(copy) : NULL, .bundle_sha256 = hex,
				       .url = url ? url : env_url };
	_cleanup_json_ json_t *st = agsbx_bundle_attest(bundle, &o, &e);
	if (!st) {
		agsbx_error("%s: %s", file, e.message);
		return AGSBX_EXIT_USAGE;
	}
	r = agsbx_cli_write_json(out, st);
	if (r < 0) {
		agsbx_error("cannot write %s: %s", out, agsbx_file_strerror(r));
		/* a missing or read-only output directory is bad input */
		bool usage = r == -ENOENT || r == -EACCES || r == -ENOTDIR || r == -EROFS || r == -EISDIR ||
			     r == -EINVAL;
		return usage ? AGSBX_EXIT_USAGE : AGSBX_EXIT_INTERNAL;
	}
	return AGSBX_EXIT_OK;
}
