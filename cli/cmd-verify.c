/* verify FILE [--key PUB | --allowed-signers F [--identity ID] | --keys-url URL]
 *             [--expect-challenge N] */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char agsbx_help_verify[] =
	"usage: agsbx-evidence verify FILE [--key PUB | --allowed-signers FILE [--identity ID] |\n"
	"                                   --keys-url URL] [--expect-challenge NONCE] [--json]\n"
	"\n"
	"Checks the bundle's SSHSIG signature (namespace agsbx-evidence) over its canonical form,\n"
	"that the signing key is trusted, and optionally the maintainer's challenge.\n"
	"\n"
	"  --key PUB              trust the key(s) in this public key file\n"
	"  --allowed-signers F    trust per an OpenSSH allowed_signers file (namespaces= honoured)\n"
	"  --identity ID          with --allowed-signers: the principal that must have signed\n"
	"  --keys-url URL         trust the keys published at URL (e.g. https://github.com/USER.keys);\n"
	"                         https only unless --allow-insecure-keys-url\n"
	"  --allow-insecure-keys-url  accept a plain http:// keys URL (a loopback test server)\n"
	"  --expect-challenge N   the bundle must carry challenge N (from 'collect --challenge N')\n"
	"  --json                 the result as JSON on stdout (same exit status)\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 valid and trusted; 1 invalid, untrusted, unsigned or wrong challenge;\n"
	"2 bad input (unreadable, not a bundle, bad trust file, plain http keys URL);\n"
	"3 keys URL unreachable.\n"
	"\n"
	"example: agsbx-evidence verify evidence.json --keys-url https://github.com/USER.keys\n";

/* Bundle strings (created_at, a challenge quoted in the reason) and a keys
 * URL's comments are hostile: printed as one escaped line each, so they
 * cannot forge the lines after them or drive the terminal. */
static void put_line(const char *label, const char *s)
{
	_cleanup_free_ char *e = agsbx_text_oneline(s, 0);
	printf("%s%s\n", label, e ? e : "?");
}

static void print_summary(const char *file, const json_t *bundle, const struct agsbx_verify_result *res)
{
	put_line("bundle:     ", file);
	put_line("created_at: ", json_string_value(json_object_get(bundle, "created_at")));
	if (res->status == AGSBX_VERIFY_UNSIGNED)
		printf("signature:  none\n");
	else if (res->signature_valid)
		printf("signature:  good (%s %s)\n", res->key_type, res->fingerprint);
	else
		printf("signature:  BAD%s%s\n", res->fingerprint[0] ? " " : "", res->fingerprint);
	if (res->trusted) {
		char who[sizeof res->identity + sizeof res->trust_source + 4];
		snprintf(who, sizeof who, "%s (%s)", res->identity, res->trust_source);
		put_line("signer:     ", who);
	} else if (res->signature_valid) {
		printf("signer:     not trusted\n");
	}
	if (res->challenge_checked)
		printf("challenge:  %s\n", res->challenge_ok ? "ok" : "MISMATCH");
	else
		printf("challenge:  not checked\n");
	printf("result:     %s\n", res->status == AGSBX_VERIFY_OK ? "valid and trusted"
								  : agsbx_verify_status_name(res->status));
}

static void print_json(const char *file, const json_t *bundle, const struct agsbx_verify_result *res)
{
	json_t *j = json_pack("{s:s, s:s?, s:s, s:b, s:b, s:s?, s:s?, s:s?, s:s?, s:b, s:o, s:s?}", "file", file,
			      "created_at", json_string_value(json_object_get(bundle, "created_at")), "status",
			      agsbx_verify_status_name(res->status), "signature_valid", res->signature_valid,
			      "trusted", res->trusted, "key_type", res->key_type[0] ? res->key_type : NULL,
			      "fingerprint", res->fingerprint[0] ? res->fingerprint : NULL, "identity",
			      res->identity[0] ? res->identity : NULL, "trust_source",
			      res->trust_source[0] ? res->trust_source : NULL, "challenge_checked",
			      res->challenge_checked, "challenge_ok",
			      res->challenge_checked ? json_boolean(res->challenge_ok) : json_null(), "reason",
			      res->status == AGSBX_VERIFY_OK ? NULL : res->reason);
	if (j)
		agsbx_cli_print_json(j, JSON_SORT_KEYS);
	json_decref(j);
}

/* The bundle in one streaming pass (no tree); AGSBX_VERIFY_TREE=1 reads it
 * into a tree as before (a hidden switch for tests/bench/evidence.sh, which
 * compares the two; same verdicts, messages and exit statuses). */
static int load_for_verify(const char *file, json_t **bundle, uint8_t sha512[64], bool *sha512_ok)
{
	const char *tree = getenv("AGSBX_VERIFY_TREE");
	if (tree && strcmp(tree, "1") == 0)
		return agsbx_cli_load_bundle_digest(file, bundle, sha512, sha512_ok);
	struct agsbx_error e = { 0 };
	if (agsbx_bundle_load_verify(file, bundle, sha512, sha512_ok, &e) < 0) {
		agsbx_error("%s", e.message); /* as agsbx_cli_load_bundle_digest reports it */
		return AGSBX_EXIT_USAGE;
	}
	return 0;
}

int agsbx_cmd_verify(int argc, char **argv)
{
	enum { O_CHALLENGE = AGSBX_OPT_LOCAL };
	static const struct option lo[] = {
		AGSBX_OPTIONS_TRUST, { "expect-challenge", required_argument, NULL, O_CHALLENGE }, AGSBX_OPTION_JSON, { 0 },
	};
	bool arena = agsbx_cli_json_arena();
	struct agsbx_verify_opts o = { 0 };
	bool json = false;
	struct agsbx_args a = { .cmd = "verify", .argc = argc, .argv = argv };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0) {
		if (c == O_CHALLENGE)
			o.expect_challenge = a.value;
		else if (c == AGSBX_OPT_JSON)
			json = true;
		else
			agsbx_trust_option(c, a.value, &o);
	}
	if (c < 0)
		return AGSBX_EXIT_USAGE;
	int rc = agsbx_args_operands(&a, 1, 1, "no bundle given", "one bundle at a time");
	if (rc)
		return rc;
	if (o.expect_challenge && !*o.expect_challenge)
		return agsbx_usage_error("verify", "--expect-challenge needs a non-empty value");
	const char *file = a.operands[0];
	_cleanup_json_ json_t *bundle = NULL;
	uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES];
	bool sha512_ok;
	if ((rc = load_for_verify(file, &bundle, sha512, &sha512_ok)))
		return rc;
	/* From the arena the values are never freed: a reference that is
	 * never dropped spares the exit a walk over the whole tree. */
	if (arena)
		json_incref(bundle);
	o.canonical_sha512 = sha512_ok ? sha512 : NULL;
	struct agsbx_error e = { 0 };
	struct agsbx_verify_result res;
	int r = agsbx_bundle_verify(bundle, &o, &res, &e);
	if (r < 0) {
		agsbx_error("%s", e.message[0] ? e.message : strerror(-r));
		return r == -EINVAL ? AGSBX_EXIT_USAGE : AGSBX_EXIT_INTERNAL;
	}
	if (json)
		print_json(file, bundle, &res);
	else
		print_summary(file, bundle, &res);
	if (res.status != AGSBX_VERIFY_OK) {
		_cleanup_free_ char *why = agsbx_text_oneline(res.reason, 0);
		agsbx_error("%s: %s: %s", file, agsbx_verify_status_name(res.status), why ? why : res.reason);
		return AGSBX_EXIT_DEFECT;
	}
	return AGSBX_EXIT_OK;
}
