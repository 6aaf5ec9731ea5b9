/* The canonical form: byte-identical to `jq -cjS 'del(.signature)'` (jq 1.6).
 *
 * No JSON library produces jq-compatible canonical JSON, so this is our own
 * serializer. jansson's json_dumps(JSON_SORT_KEYS|JSON_COMPACT) differs from
 * jq in three ways we checked byte for byte: it writes control characters as
 * "\u001F" (jq: lowercase "\u001f"), leaves DEL (0x7f) raw (jq: "\u007f"),
 * and prints integers beyond 2^53 exactly (jq stores numbers as doubles and
 * prints 1e+16 for 10000000000000000). So: strings are escaped the way jq
 * escapes them ('"', '\\', \b \f \n \r \t, other C0 controls and DEL as
 * lowercase \u00xx, everything else including '/', non-ASCII, U+2028 and
 * emoji as raw UTF-8), keys are sorted bytewise (jq compares with memcmp),
 * and only integers within +-2^53 are accepted (reals, NUL bytes, invalid
 * UTF-8 and larger integers make the bundle non-canonicalisable). */
#include "evidence/evidence.h"
#include "base/util.h"
#include "base/compat.h"
#include "evidence/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

/* Bytes that end a verbatim run: what jq escapes, and non-ASCII (checked
 * as UTF-8). */
static const unsigned char special[256] = {
	[0x00 ... 0x1F] = 1, ['"'] = 1, ['\\'] = 1, [0x7F ... 0xFF] = 1,
};

int ev_canonical_put_string(struct sbuf *b, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	sbuf_putc(b, '"');
	size_t run = 0; /* start of the pending run of bytes copied verbatim */
	for (size_t i = 0; i < len;) {
		while (i < len && !special[s[i]])
			i++;
		if (i == len)
			break;
		unsigned c = s[i];
		if (c >= 0x80) {
			size_t n = agsbx_utf8_seq_len(s + i, len - i);
			if (n == 0)
				return -EILSEQ;
			i += n;
			continue;
		}
		if (c == 0)
			return -EILSEQ;
		sbuf_put(b, s + run, i - run);
		char esc[7] = { '\\', 0 };
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
		}
		sbuf_puts(b, esc);
		i++;
		run = i;
	}
	sbuf_put(b, s + run, len - run);
	sbuf_putc(b, '"');
	return 0;
}

/* Decimal, as jq prints integers within +-2^53 (no printf: it showed up
 * in profiles). */
static void put_int(struct sbuf *b, json_int_t v)
{
	char buf[24];
	size_t i = sizeof buf;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		buf[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[--i] = '-';
	sbuf_put(b, buf + i, sizeof buf - i);
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int put_value(struct sbuf *b, const json_t *j, const char *skip_key);

static int put_object(struct sbuf *b, const json_t *j, const char *skip_key)
{
	size_t n = json_object_size(j);
	const char **keys = malloc((n ? n : 1) * sizeof *keys);
	if (!keys)
		return -ENOMEM;
	size_t k = 0;
	int r = 0;
	for (void *it = json_object_iter((json_t *)j); it; it = json_object_iter_next((json_t *)j, it)) {
		const char *key = json_object_iter_key(it);
		/* jansson 2.14 allows keys with NUL (json_object_setn); never in a bundle */
		if (agsbx_json_iter_key_len(it) != strlen(key)) {
			r = -EILSEQ;
			goto out;
		}
		if (skip_key && strcmp(key, skip_key) == 0)
			continue;
		keys[k++] = key;
	}
	qsort(keys, k, sizeof *keys, cmp_keys);
	sbuf_putc(b, '{');
	for (size_t i = 0; i < k && r == 0; i++) {
		if (i)
			sbuf_putc(b, ',');
		r = ev_canonical_put_string(b, keys[i], strlen(keys[i]));
		sbuf_putc(b, ':');
		if (r == 0)
			r = put_value(b, json_object_get(j, keys[i]), NULL);
	}
	sbuf_putc(b, '}');
out:
	free(keys);
	return r;
}

static int put_value(struct sbuf *b, const json_t *j, const char *skip_key)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return put_object(b, j, skip_key);
	case JSON_ARRAY: {
		sbuf_putc(b, '[');
		for (size_t i = 0; i < json_array_size(j); i++) {
			if (i)
				sbuf_putc(b, ',');
			int r = put_value(b, json_array_get(j, i), NULL);
			if (r < 0)
				return r;
		}
		sbuf_putc(b, ']');
		return 0;
	}
	case JSON_STRING:
		return ev_canonical_put_string(b, json_string_value(j), json_string_length(j));
	case JSON_INTEGER: {
		json_int_t v = json_integer_value(j);
		if (v > AGSBX_JSON_INT_MAX || v < -AGSBX_JSON_INT_MAX)
			return -ERANGE;
		put_int(b, v);
		return 0;
	}
	case JSON_REAL:
		return -EDOM;
	case JSON_TRUE:
		sbuf_puts(b, "true");
		return 0;
	case JSON_FALSE:
		sbuf_puts(b, "false");
		return 0;
	case JSON_NULL:
		sbuf_puts(b, "null");
		return 0;
	}
	return -EINVAL;
}

char *agsbx_json_canonical(const json_t *j, const char *skip_key, size_t *len)
{
	if (!j) {
		errno = EINVAL;
		return NULL;
	}
	struct sbuf b = { 0 };
	int r = put_value(&b, j, skip_key);
	if (r == 0 && b.oom)
		r = -ENOMEM;
	if (r < 0) {
		sbuf_clear(&b);
		errno = -r;
		return NULL;
	}
	return sbuf_take(&b, len);
}

struct digest {
	bool sha512;
	crypto_hash_sha512_state s512;
	crypto_hash_sha256_state s256;
};

static void digest_sink(void *ud, const void *data, size_t n)
{
	struct digest *d = ud;
	if (d->sha512)
		crypto_hash_sha512_update(&d->s512, data, n);
	else
		crypto_hash_sha256_update(&d->s256, data, n);
}

int ev_json_canonical_digest(const json_t *j, const char *skip_key, const char *alg, uint8_t *out,
				size_t *out_len)
{
	struct digest d = { .sha512 = strcmp(alg, "sha512") == 0 };
	if (!d.sha512 && strcmp(alg, "sha256") != 0)
		return -EINVAL;
	if (d.sha512)
		crypto_hash_sha512_init(&d.s512);
	else
		crypto_hash_sha256_init(&d.s256);
	struct sbuf b = { .sink = digest_sink, .sink_ud = &d };
	int r = j ? put_value(&b, j, skip_key) : -EINVAL;
	if (r == 0 && b.oom)
		r = -ENOMEM;
	if (r == 0)
		sbuf_flush_sink(&b);
	sbuf_clear(&b);
	if (r < 0)
		return r;
	if (d.sha512) {
		crypto_hash_sha512_final(&d.s512, out);
		*out_len = crypto_hash_sha512_BYTES;
	} else {
		crypto_hash_sha256_final(&d.s256, out);
		*out_len = crypto_hash_sha256_BYTES;
	}
	return 0;
}

char *agsbx_bundle_canonical(const json_t *bundle, size_t *len)
{
	if (!json_is_object(bundle)) {
		errno = EINVAL;
		return NULL;
	}
	return agsbx_json_canonical(bundle, "signature", len);
}
