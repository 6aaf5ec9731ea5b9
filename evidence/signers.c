/* One allowed_signers line read exactly as OpenSSH 9.2p1 (Debian 12's
 * ssh-keygen) reads it: sshsig.c:parse_principals_key_and_options() and
 * sshsigopt_parse(), with the helpers they call ported one by one
 * (misc.c:strdelimw, authfile.c:sshkey_advance_past_options,
 * sshkey.c:sshkey_read/peek_type_nid/sshkey_type_from_name,
 * misc.c:opt_flag/opt_match/opt_dequote/parse_absolute_time). Each port
 * keeps OpenSSH's quirks on purpose: a quote mid-token in the principals,
 * an escaped quote, an empty option between commas are what ssh-keygen
 * makes of them, because `verify` must never trust a line ssh-keygen
 * refuses (tests/cli/signers-diff.sh compares the two). */
#include "evidence/internal.h"

#include "base/cleanup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define WHITESPACE " \t\r\n"      /* misc.c */

enum kfamily { K_ED25519, K_RSA, K_DSA, K_ECDSA, K_ED25519_SK, K_ECDSA_SK, K_CERT };

/* sshkey.c's keyimpls[] as built on Debian 12 (no XMSS): name, shortname
 * (matched case-insensitively in a blob, never for certificates), family,
 * curve. Certificates only need telling apart: one never equals the
 * plain key an SSHSIG names (sshkey.c:sshkey_equal compares types). */
static const struct ktype {
	const char *name, *shortname;
	enum kfamily family;
	int curve;
	const char *canon;        /* the blob's own name for the family */
} ktypes[] = {
	{ "ssh-ed25519", "ED25519", K_ED25519, 0, "ssh-ed25519" },
	{ "ssh-rsa", "RSA", K_RSA, 0, "ssh-rsa" },
	{ "rsa-sha2-256", "RSA", K_RSA, 0, "ssh-rsa" },
	{ "rsa-sha2-512", "RSA", K_RSA, 0, "ssh-rsa" },
	{ "ecdsa-sha2-nistp256", "ECDSA", K_ECDSA, 256, NULL },
	{ "ecdsa-sha2-nistp384", "ECDSA", K_ECDSA, 384, NULL },
	{ "ecdsa-sha2-nistp521", "ECDSA", K_ECDSA, 521, NULL },
	{ "ssh-dss", "DSA", K_DSA, 0, "ssh-dss" },
	{ "sk-ssh-ed25519@openssh.com", "ED25519-SK", K_ED25519_SK, 0, "sk-ssh-ed25519@openssh.com" },
	{ "sk-ecdsa-sha2-nistp256@openssh.com", "ECDSA-SK", K_ECDSA_SK, 256, NULL },
	{ "webauthn-sk-ecdsa-sha2-nistp256@openssh.com", "ECDSA-SK", K_ECDSA_SK, 256, NULL },
	{ "ssh-ed25519-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "ssh-rsa-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "rsa-sha2-256-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "rsa-sha2-512-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "ecdsa-sha2-nistp256-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "ecdsa-sha2-nistp384-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "ecdsa-sha2-nistp521-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "ssh-dss-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "sk-ssh-ed25519-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
	{ "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", NULL, K_CERT, 0, NULL },
};

void ev_signer_clear(struct ev_signer *s)
{
	sshkey_clear(&s->key);
	free(s->principals);
	free(s->namespaces);
	memset(s, 0, sizeof *s);
}

/* sshkey.c:peek_type_nid(): the line's type, by exact name only. */
static const struct ktype *ktype_of_line(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof ktypes / sizeof *ktypes; i++)
		if (strlen(ktypes[i].name) == n && memcmp(s, ktypes[i].name, n) == 0)
			return &ktypes[i];
	return NULL;
}

/* sshkey.c:sshkey_type_from_name(): the blob's type, by name or by the
 * shortname of a plain key (case-insensitive); the name is a C string
 * (sshbuf_get_cstring() refuses a NUL inside it). */
static const struct ktype *ktype_of_blob(const uint8_t *s, size_t n)
{
	char name[64];
	if (n >= sizeof name || memchr(s, '\0', n))
		return NULL;
	memcpy(name, s, n);
	name[n] = '\0';
	for (size_t i = 0; i < sizeof ktypes / sizeof *ktypes; i++)
		if (strcmp(name, ktypes[i].name) == 0 ||
		    (ktypes[i].shortname && strcasecmp(name, ktypes[i].shortname) == 0))
			return &ktypes[i];
	return NULL;
}

/* sshkey.c:sshkey_fromb() as far as matching needs: the blob's type must
 * be the line's family (ecdsa: the same curve, named in full, since
 * ssh-ecdsa.c takes the curve from the name), an Ed25519 key is exactly
 * 32 bytes with nothing after it. The blob kept is the key's canonical
 * one, so that "ED25519" or "rsa-sha2-256" as the blob's name still
 * equals the signing key, as sshkey_equal() compares key material. Other
 * families are compared as their bytes (a non-minimal RSA mpint that
 * OpenSSH would trim then does not match: the safe direction). */
static int key_from_blob(const struct ktype *t, const uint8_t *blob, size_t n, struct sshkey *k)
{
	struct sshrd rd = { blob, n };
	const uint8_t *name, *pk;
	size_t nl, pkl;
	if (sshrd_str(&rd, &name, &nl) < 0)
		return -EINVAL;
	if (nl > 0 && name[nl - 1] == '\0') /* sshbuf_get_cstring() drops one at the end */
		nl--;
	const struct ktype *in = ktype_of_blob(name, nl);
	if (!in || in->family != t->family)
		return -EINVAL;
	if (t->family == K_ECDSA || t->family == K_ECDSA_SK) {
		if (!in->canon && strlen(in->name) == nl && in->curve == t->curve && memcmp(name, in->name, nl) == 0)
			goto keep;
		return -EINVAL;
	}
	if (t->family == K_ED25519) {
		if (sshrd_str(&rd, &pk, &pkl) < 0 || pkl != ED25519_PK || rd.left != 0)
			return -EINVAL;
		struct sbuf b = { 0 };
		sshkey_ed25519_blob(&b, pk);
		if (b.oom)
			return -ENOMEM;
		k->blob = (uint8_t *)sbuf_take(&b, &k->blob_len);
		return k->blob ? 0 : -ENOMEM;
	}
	if (t->canon) {
		struct sbuf b = { 0 };
		sbuf_sshstr(&b, t->canon, strlen(t->canon));
		sbuf_put(&b, rd.p, rd.left);
		k->blob = (uint8_t *)sbuf_take(&b, &k->blob_len);
		return k->blob ? 0 : -ENOMEM;
	}
keep:
	k->blob = malloc(n ? n : 1);
	if (!k->blob)
		return -ENOMEM;
	memcpy(k->blob, blob, n);
	k->blob_len = n;
	return 0;
}

/* sshkey.c:sshkey_read(): "TYPE BASE64" at *cpp, which moves past the
 * blob and its blanks only on success. The blob runs to a blank or tab;
 * a newline in it is ignored by b64_pton as any space is. */
static int read_key(char **cpp, struct sshkey *k)
{
	char *cp = *cpp;
	size_t space = strcspn(cp, " \t");
	if (space == strlen(cp))
		return -EINVAL;
	const struct ktype *t = ktype_of_line(cp, space);
	if (!t)
		return -EINVAL;
	for (cp += space; *cp == ' ' || *cp == '\t'; cp++)
		;
	if (!*cp)
		return -EINVAL;
	space = strcspn(cp, " \t");
	size_t n;
	_cleanup_free_ uint8_t *blob = ev_b64_decode(cp, space, "\n\r\v\f", &n);
	if (!blob)
		return -EINVAL;
	sshkey_clear(k);
	int r = key_from_blob(t, blob, n, k);
	if (r < 0)
		return r;
	snprintf(k->type, sizeof k->type, "%s", t->name);
	for (cp += space; *cp == ' ' || *cp == '\t'; cp++)
		;
	*cpp = cp;
	return 0;
}

/* misc.c:strdelim_internal(s, 0), alias strdelimw(): the next token, cut
 * at whitespace, or, when the first delimiter is a quote, that quote
 * removed and the token running to the next quote (so foo"bar baz" is
 * `foobar baz`). NULL for an unmatched quote; *s NULL when the token
 * ends the line. */
static char *strdelimw(char **s)
{
	if (!*s)
		return NULL;
	char *old = *s;
	*s = strpbrk(*s, WHITESPACE "\"");
	if (!*s)
		return old;
	if (**s == '"') {
		memmove(*s, *s + 1, strlen(*s));
		*s = strpbrk(*s, "\"");
		if (!*s)
			return NULL;
	}
	**s = '\0';
	*s += strspn(*s + 1, WHITESPACE) + 1;
	return old;
}

/* authfile.c:sshkey_advance_past_options(): to the first unquoted blank
 * or tab; \" neither opens nor closes a quote. */
static int advance_past_options(char **cpp)
{
	char *cp = *cpp;
	bool quoted = false;
	for (; *cp && (quoted || (*cp != ' ' && *cp != '\t')); cp++) {
		if (*cp == '\\' && cp[1] == '"')
			cp++;
		else if (*cp == '"')
			quoted = !quoted;
	}
	*cpp = cp;
	return (*cp == '\0' && quoted) ? -EINVAL : 0;
}

/* misc.c:opt_match(): "term=" in any case. */
static bool opt_match(const char **opts, const char *term)
{
	size_t n = strlen(term);
	if (strncasecmp(*opts, term, n) == 0 && (*opts)[n] == '=') {
		*opts += n + 1;
		return true;
	}
	return false;
}

/* misc.c:opt_dequote(): a "quoted" value, \" standing for a quote. */
static int opt_dequote(const char **sp, char **out, const char **errstr)
{
	const char *s = *sp;
	if (*s != '"') {
		*errstr = "missing start quote";
		return -EINVAL;
	}
	s++;
	char *ret = malloc(strlen(s) + 1);
	if (!ret)
		return -ENOMEM;
	size_t i = 0;
	while (*s && *s != '"') {
		if (s[0] == '\\' && s[1] == '"')
			s++;
		ret[i++] = *s++;
	}
	if (!*s) {
		*errstr = "missing end quote";
		free(ret);
		return -EINVAL;
	}
	ret[i] = '\0';
	*sp = s + 1;
	*out = ret;
	return 0;
}

/* misc.c:parse_absolute_time(): YYYYMMDD[HHMM[SS]], then "Z" or "UTC"
 * (any case) for UTC, else local time; 0 when malformed, and the epoch
 * itself is malformed too (sshsigopt_parse: "== 0" is an invalid time). */
static uint64_t parse_absolute_time(const char *s)
{
	size_t l = strlen(s);
	bool utc = false;
	if (l > 1 && strcasecmp(s + l - 1, "Z") == 0) {
		utc = true;
		l--;
	} else if (l > 3 && strcasecmp(s + l - 3, "UTC") == 0) {
		utc = true;
		l -= 3;
	}
	char buf[32];
	const char *fmt;
	if (l == 8) {
		fmt = "%Y-%m-%d";
		snprintf(buf, sizeof buf, "%.4s-%.2s-%.2s", s, s + 4, s + 6);
	} else if (l == 12) {
		fmt = "%Y-%m-%dT%H:%M";
		snprintf(buf, sizeof buf, "%.4s-%.2s-%.2sT%.2s:%.2s", s, s + 4, s + 6, s + 8, s + 10);
	} else if (l == 14) {
		fmt = "%Y-%m-%dT%H:%M:%S";
		snprintf(buf, sizeof buf, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s", s, s + 4, s + 6, s + 8, s + 10, s + 12);
	} else {
		return 0;
	}
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *end = strptime(buf, fmt, &tm);
	if (!end || *end)
		return 0;
	time_t t = utc ? timegm(&tm) : mktime(&tm);
	return t > 0 ? (uint64_t)t : 0;
}

/* One of sshsigopt_parse()'s valid-after/valid-before clauses. */
static int opt_time(const char **opts, uint64_t *t, bool after, const char **errstr)
{
	if (*t) {
		*errstr = after ? "multiple \"valid-after\" clauses" : "multiple \"valid-before\" clauses";
		return -EINVAL;
	}
	_cleanup_free_ char *v = NULL;
	int r = opt_dequote(opts, &v, errstr);
	if (r < 0)
		return r;
	*t = parse_absolute_time(v);
	if (!*t) {
		*errstr = after ? "invalid \"valid-after\" time" : "invalid \"valid-before\" time";
		return -EINVAL;
	}
	return 0;
}

/* One option at *opts (sshsigopt_parse's loop body): an option name that
 * is none of these leaves *opts where it was, and the caller then finds
 * no comma there ("unknown key option"). */
static int parse_one_option(struct ev_signer *sg, const char **opts, const char **errstr)
{
	if (strncasecmp(*opts, "cert-authority", 14) == 0) { /* opt_flag(): a prefix */
		*opts += 14;
		sg->cert_authority = true;
	} else if (opt_match(opts, "namespaces")) {
		if (sg->namespaces) {
			*errstr = "multiple \"namespaces\" clauses";
			return -EINVAL;
		}
		return opt_dequote(opts, &sg->namespaces, errstr);
	} else if (opt_match(opts, "valid-after")) {
		return opt_time(opts, &sg->valid_after, true, errstr);
	} else if (opt_match(opts, "valid-before")) {
		return opt_time(opts, &sg->valid_before, false, errstr);
	}
	return 0;
}

/* sshsig.c:sshsigopt_parse(): a repeated option, a trailing comma, an
 * unknown option and an inverted validity window are all malformed; an
 * empty option between commas is not (OpenSSH skips it). */
static int parse_sigopts(struct ev_signer *sg, const char *opts, const char **errstr)
{
	if (!opts)
		return 0;
	while (*opts && *opts != ' ' && *opts != '\t') {
		int r = parse_one_option(sg, &opts, errstr);
		if (r < 0)
			return r;
		if (*opts == '\0' || *opts == ' ' || *opts == '\t')
			break;
		if (*opts != ',') {
			*errstr = "unknown key option";
			return -EINVAL;
		}
		opts++;
		if (*opts == '\0') {
			*errstr = "unexpected end-of-options";
			return -EINVAL;
		}
	}
	if (sg->valid_after && sg->valid_before && sg->valid_before <= sg->valid_after) {
		*errstr = "\"valid-before\" time is before \"valid-after\"";
		return -EINVAL;
	}
	return 0;
}

/* The key, after options when it does not start right after the
 * principals (parse_principals_key_and_options); *opts is set to them. */
static int read_options_and_key(char *cp, struct ev_signer *sg, char **opts, char *why, size_t why_size)
{
	int r = read_key(&cp, &sg->key);
	if (r != -EINVAL)
		return r;
	*opts = cp;
	if (advance_past_options(&cp) < 0) {
		ev_set_err(why, why_size, "invalid options");
		return -EINVAL;
	}
	if (!*cp) {
		ev_set_err(why, why_size, "missing key");
		return -EINVAL;
	}
	*cp++ = '\0';
	cp += strspn(cp, " \t");
	r = read_key(&cp, &sg->key);
	if (r == -EINVAL)
		ev_set_err(why, why_size, "invalid key");
	return r;
}

int ev_signer_parse(const char *text, struct ev_signer *sg, char *why, size_t why_size)
{
	memset(sg, 0, sizeof *sg);
	_cleanup_free_ char *line = strdup(text);
	if (!line)
		return -ENOMEM;
	char *cp = line + strspn(line, " \t");
	/* blank, comment, or only line-end bytes ("\r\n"): OpenSSH finds no
	 * key on such a line either */
	if (*cp == '#' || cp[strspn(cp, WHITESPACE)] == '\0')
		return 0;
	char *tmp = strdelimw(&cp);
	if (!tmp || !cp) {
		ev_set_err(why, why_size, "invalid line");
		return -EINVAL;
	}
	sg->principals = strdup(tmp);
	if (!sg->principals)
		return -ENOMEM;
	char *opts = NULL;
	int r = read_options_and_key(cp, sg, &opts, why, why_size);
	if (r < 0)
		return r;
	const char *errstr = "?";
	r = parse_sigopts(sg, opts, &errstr);
	if (r == -EINVAL)
		ev_set_err(why, why_size, "bad options: %s", errstr);
	return r < 0 ? r : 1;
}
