/* Provenance of a bundle for the maintainer views (diff, matrix): was it
 * signed and by a trusted signer, is it representative and why not, which
 * labelled simulations shaped it, the maintainer's challenge, the subject
 * commit, the tool; and which providers were blocked, with the reason. */
#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"

#include "base/cleanup.h"

#include <errno.h>
#include <string.h>

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* -ENOMEM when verification ran out of memory (no verdict to record). */
static int add_signature(json_t *p, const json_t *bundle, const struct agsbx_verify_opts *trust)
{
	struct agsbx_verify_result res;
	char err[256] = "";
	int r = ev_bundle_verify(bundle, trust, &res, err, sizeof err);
	if (r == -ENOMEM)
		return r;
	if (r < 0 && trust) { /* the anchor failed (e.g. keys URL down): integrity only */
		json_object_set_new(p, "trust_error", json_string(err));
		r = ev_bundle_verify(bundle, NULL, &res, err, sizeof err);
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		json_object_set_new(p, "signature", json_string("unknown"));
		return 0;
	}
	const char *sig = res.status == AGSBX_VERIFY_UNSIGNED ? "none" : res.signature_valid ? "good" : "invalid";
	json_object_set_new(p, "signature", json_string(sig));
	json_object_set_new(p, "fingerprint", str_or_null(res.fingerprint[0] ? res.fingerprint : NULL));
	/* null: no trust anchor was given, so trust was not decided */
	json_object_set_new(p, "trusted", trust && res.signature_valid && !json_object_get(p, "trust_error")
						  ? json_boolean(res.trusted) : json_null());
	json_object_set_new(p, "signer", str_or_null(res.trusted ? res.identity : NULL));
	return 0;
}

static json_t *simulation_names(const json_t *ctx)
{
	json_t *names = json_array();
	const json_t *sims = json_object_get(ctx, "simulations");
	for (size_t i = 0; names && i < json_array_size(sims); i++) {
		const char *n = ev_jstr(json_array_get(sims, i), "name");
		if (n)
			json_array_append_new(names, json_string(n));
	}
	return names;
}

static json_t *blocked_providers(const json_t *bundle)
{
	json_t *out = json_array();
	const json_t *providers = json_object_get(bundle, "providers");
	for (size_t i = 0; out && i < json_array_size(providers); i++) {
		const json_t *pr = json_array_get(providers, i);
		if (agsbx_provider_verdict_of(pr) != AGSBX_PROVIDER_BLOCKED)
			continue;
		const json_t *probe = json_object_get(pr, "probe");
		json_array_append_new(out, json_pack("{s:o, s:o, s:o, s:o}", "id", str_or_null(ev_jstr(pr, "id")),
						     "reason", str_or_null(ev_jstr(pr, "reason")), "detail",
						     str_or_null(ev_jstr(probe, "detail")), "hint",
						     str_or_null(ev_jstr(probe, "hint"))));
	}
	return out;
}

json_t *agsbx_bundle_provenance(const json_t *bundle, const struct agsbx_verify_opts *trust)
{
	_cleanup_json_ json_t *p = json_object();
	if (!p || add_signature(p, bundle, trust) < 0)
		return NULL;
	const json_t *ctx = json_object_get(bundle, "context");
	const json_t *rep = json_object_get(ctx, "representative");
	json_object_set_new(p, "representative", json_is_boolean(rep) ? json_copy((json_t *)rep) : json_null());
	const json_t *reasons = json_object_get(ctx, "representative_reasons");
	json_object_set_new(p, "representative_reasons", json_is_array(reasons) ? json_deep_copy(reasons) : json_array());
	json_object_set_new(p, "simulations", simulation_names(ctx));
	json_object_set_new(p, "challenge", str_or_null(ev_jstr(bundle, "challenge")));
	const json_t *subj = json_object_get(bundle, "subject");
	json_object_set_new(p, "subject", json_is_object(subj)
		? json_pack("{s:o, s:o, s:o}", "commit", str_or_null(ev_jstr(subj, "commit")), "branch",
			    str_or_null(ev_jstr(subj, "branch")), "dirty", json_is_boolean(json_object_get(subj, "dirty"))
			    ? json_copy(json_object_get(subj, "dirty")) : json_null())
		: json_null());
	const json_t *tool = json_object_get(bundle, "tool");
	json_object_set_new(p, "tool", json_pack("{s:o, s:o}", "version", str_or_null(ev_jstr(tool, "version")),
						 "git_commit", str_or_null(ev_jstr(tool, "git_commit"))));
	json_object_set_new(p, "blocked", blocked_providers(bundle));
	return TAKE_PTR(p);
}

/* ---- display --------------------------------------------------------------- */

static void put_list(struct sbuf *b, const json_t *arr, enum esc_mode m, const char *none)
{
	if (json_array_size(arr) == 0) {
		sbuf_puts(b, none);
		return;
	}
	for (size_t i = 0; i < json_array_size(arr); i++) {
		if (i)
			sbuf_puts(b, ", ");
		ev_put_esc(b, json_string_value(json_array_get(arr, i)), m, 64);
	}
}

void ev_provenance_put(struct sbuf *b, const json_t *p, enum esc_mode m, const char *sep)
{
	const char *sig = ev_jstr(p, "signature");
	const json_t *trusted = json_object_get(p, "trusted");
	ev_putf(b, m, "signature %.16s", sig);
	if (ev_jstr(p, "fingerprint"))
		ev_putf(b, m, " %.64s", ev_jstr(p, "fingerprint"));
	if (json_is_true(trusted)) {
		ev_putf(b, m, ", trusted signer %.80s", ev_jstr(p, "signer"));
	} else if (json_is_false(trusted)) {
		sbuf_puts(b, ", signer NOT trusted");
	} else if (sig && strcmp(sig, "good") == 0) {
		sbuf_puts(b, ", signer not checked (no --key/--allowed-signers/--keys-url)");
	}
	sbuf_puts(b, sep);
	const json_t *rep = json_object_get(p, "representative");
	sbuf_puts(b, json_is_true(rep) ? "representative" : json_is_false(rep) ? "not representative (" : "representative ?");
	if (json_is_false(rep)) {
		put_list(b, json_object_get(p, "representative_reasons"), m, "no reason given");
		sbuf_putc(b, ')');
	}
	sbuf_puts(b, sep);
	const json_t *sims = json_object_get(p, "simulations");
	sbuf_puts(b, json_array_size(sims) ? "SIMULATED: " : "simulation: ");
	put_list(b, sims, m, "none");
	sbuf_puts(b, sep);
	sbuf_puts(b, "challenge: ");
	ev_put_esc(b, ev_jstr(p, "challenge") ? ev_jstr(p, "challenge") : "none", m, 64);
	sbuf_puts(b, sep);
	const json_t *subj = json_object_get(p, "subject");
	sbuf_puts(b, "subject: ");
	if (json_is_object(subj)) {
		ev_putf(b, m, "%.64s@%.12s", ev_jstr(subj, "branch"), ev_jstr(subj, "commit"));
		sbuf_puts(b, json_is_true(json_object_get(subj, "dirty")) ? " (dirty)" : "");
	} else {
		sbuf_puts(b, "none");
	}
	sbuf_puts(b, sep);
	sbuf_puts(b, "tool ");
	ev_put_esc(b, ev_jstr(json_object_get(p, "tool"), "version"), m, 32);
}

void ev_provenance_put_blocked(struct sbuf *b, const json_t *p, enum esc_mode m, const char *sep)
{
	const json_t *blocked = json_object_get(p, "blocked");
	for (size_t i = 0; i < json_array_size(blocked); i++) {
		const json_t *e = json_array_get(blocked, i);
		if (i)
			sbuf_puts(b, sep);
		ev_putf(b, m, "%.64s blocked: %.64s", ev_jstr(e, "id"), ev_jstr(e, "reason"));
	}
}

int agsbx_provenance_render(const json_t *const *provs, const char *const *labels, size_t n, const char *format,
			    FILE *out)
{
	bool md = format && strcmp(format, "markdown") == 0;
	if (!format || (!md && strcmp(format, "text") != 0))
		return -EINVAL;
	enum esc_mode m = md ? ESC_MD : ESC_TEXT;
	struct sbuf b = { 0 };
	/* markdown: a list, not a table: a fingerprint or a CI path is one
	 * word a table cell cannot wrap, and would push it past a PR
	 * comment's width (760 px); a list item wraps it */
	sbuf_puts(&b, md ? "#### Provenance\n\n" : "provenance:\n");
	for (size_t i = 0; i < n; i++) {
		sbuf_puts(&b, md ? "- **" : "  ");
		ev_put_esc(&b, labels[i], m, 240); /* whole: a path differs at its end */
		sbuf_puts(&b, md ? "**: " : ": ");
		ev_provenance_put(&b, provs[i], m, md ? "; " : "\n      ");
		if (md) {
			if (json_array_size(json_object_get(provs[i], "blocked")))
				sbuf_puts(&b, "; ");
			ev_provenance_put_blocked(&b, provs[i], m, "; ");
			sbuf_putc(&b, '\n');
		} else if (json_array_size(json_object_get(provs[i], "blocked"))) {
			sbuf_puts(&b, "\n      ");
			ev_provenance_put_blocked(&b, provs[i], m, "\n      ");
			sbuf_putc(&b, '\n');
		} else {
			sbuf_putc(&b, '\n');
		}
	}
	return sbuf_flush(&b, 0, out);
}

int agsbx_provenance_notes(const json_t *const *provs, const char *const *labels, size_t n, const char *format,
			   FILE *out)
{
	bool md = format && strcmp(format, "markdown") == 0;
	enum esc_mode m = md ? ESC_MD : ESC_TEXT;
	struct sbuf b = { 0 };
	for (size_t i = 0; i < n; i++) {
		const json_t *sims = json_object_get(provs[i], "simulations");
		if (!json_array_size(sims))
			continue;
		sbuf_puts(&b, md ? "> **Note:** " : "note: ");
		ev_put_esc(&b, labels[i], m, 240); /* whole: a path differs at its end */
		sbuf_puts(&b, " is a labelled simulation (");
		put_list(&b, sims, m, "");
		sbuf_puts(&b, "): what it shows blocked is simulated, not this host's policy\n");
		if (md)
			sbuf_putc(&b, '\n');
	}
	return sbuf_flush(&b, 0, out);
}
