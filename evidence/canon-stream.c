/* verify's one pass: the canonical form (canonical.c's bytes) written
 * straight from the input, without a jansson tree, and hashed as it is
 * produced.
 *
 * The reader is parse.c's lexer (jparse.h) with its own value walk: no
 * value is allocated, strings are copied into the output (escaped the way
 * jq escapes them) and numbers and literals verbatim. What the tree reader
 * and the loader check on the tree is checked on the way: the grammar, the
 * nesting limit, duplicate keys, and the bundle's member table (load.c's
 * ev_bundle_fields: types, allowed values, required members, provider and
 * check ids). Only the members verify and its output read are kept (the
 * "view": created_at, challenge, signature).
 *
 * Keys: a bundle is written sorted (by this tool, jq -S, any sorting
 * serializer), and then the output needs no reordering. Each object's
 * members are recorded as spans of the output; an object whose keys came
 * out of order has its span list sorted and its region rewritten when it
 * closes (never a whole tree: only that object's bytes). Hashing runs on
 * a second thread (sha512-pipe.c) while the keys are in order; once an
 * object is out of order the streamed hash is dropped and the finished
 * output hashed at the end.
 *
 * The stream never decides against a bundle: on any error (and wherever
 * the loader would refuse) it says so and the caller reads the same bytes
 * with the tree reader, whose messages and verdicts are the reference
 * (the test and the fuzz target compare the two). */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA512(): see sha512-pipe.c */
#include "evidence/evidence.h"
#include "evidence/internal.h"
#include "evidence/jparse.h"

#include "base/cleanup.h"
#include "base/util.h"

#include <errno.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

/* What a member's value is to the view. */
enum kind { K_PLAIN, K_ROOT, K_SIG, K_ID_ITEM };

struct span {
	const char *key; /* decoded, for sorting */
	size_t klen;
	size_t at;       /* the member's first output byte (its key's quote) */
};

struct id {
	const char *s;
	size_t n;
};

struct stream {
	struct parser ps;       /* the lexer's position and first error */
	bool refused;           /* a rule the loader checks (no message: the tree reader gives it) */
	bool oom;
	struct sbuf out;        /* the whole canonical form */
	const char *skip_key;
	int mute;               /* > 0: inside the skipped top-level member */
	bool skip_seen;
	struct span *spans;     /* the open objects' members, one stack for all */
	size_t nspans, capspans;
	struct id *ids;         /* the open id lists' ids, likewise */
	size_t nids, capids;
	char **owned;           /* decoded keys and ids, freed at the end */
	size_t nowned, capowned;
	struct ev_sha512_pipe *pipe;
	size_t fed;             /* output bytes handed to the pipe */
	bool unsorted;          /* some object was reordered: the streamed hash is void */
	json_t *view, *sig;
	bool sig_seen;
};

static bool ok(const struct stream *st) { return !st->ps.failed && !st->refused && !st->oom; }

static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 64;
	void *p = reallocarray(*v, c, size);
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}

/* Keeps a decoded string alive to the end (span keys, ids). */
static void keep(struct stream *st, char **owned)
{
	if (!*owned)
		return;
	if (!grow((void **)&st->owned, &st->capowned, st->nowned, sizeof *st->owned)) {
		st->oom = true;
		return;
	}
	st->owned[st->nowned++] = *owned;
	*owned = NULL;
}

static void feed(struct stream *st)
{
	if (st->pipe && !st->unsorted && st->out.len - st->fed >= SBUF_CHUNK) {
		ev_sha512_pipe_put(st->pipe, st->out.p + st->fed, st->out.len - st->fed);
		st->fed = st->out.len;
	}
}

/* The output is sized for the input (stream_start): the common case is a
 * plain copy; sbuf_put grows it (DEL escapes) or records running out. The
 * NUL sbuf keeps after its bytes is written once, at the end. */
static inline void emit(struct stream *st, const char *s, size_t n)
{
	if (st->mute)
		return;
	if (st->out.len + n < st->out.cap) {
		memcpy(st->out.p + st->out.len, s, n);
		st->out.len += n;
	} else {
		sbuf_put(&st->out, s, n);
	}
}

static inline void emit_c(struct stream *st, char c)
{
	if (st->mute)
		return;
	if (st->out.len + 1 < st->out.cap)
		st->out.p[st->out.len++] = c;
	else
		sbuf_putc(&st->out, c);
}

/* As parse.c's emit_string: raw input (no escapes) needs escaping only for DEL. */
static void emit_string(struct stream *st, const char *s, size_t n, bool raw)
{
	if (st->mute)
		return;
	if (raw && !memchr(s, 0x7f, n)) {
		emit_c(st, '"');
		emit(st, s, n);
		emit_c(st, '"');
	} else if (ev_canonical_put_string(&st->out, s, n) < 0) {
		st->refused = true; /* the lexer let no NUL or bad UTF-8 through: never */
	}
}

static int key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t m = an < bn ? an : bn;
	int c = m ? memcmp(a, b, m) : 0; /* (an empty key's pointer may be anything) */
	return c ? c : (an > bn) - (an < bn);
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return key_cmp(x->key, x->klen, y->key, y->klen);
}

/* The members spans[base..] of an object whose keys came out of order,
 * rewritten in key order in the output (they end where the object's '}'
 * goes). A duplicate shows up as two equal neighbours. */
static void reorder(struct stream *st, size_t base)
{
	struct span *sp = st->spans + base;
	size_t n = st->nspans - base, from = sp[0].at, end = st->out.len;
	struct sorted {
		struct span s; /* first: span_cmp sorts these too */
		size_t end;
	};
	_cleanup_free_ struct sorted *v = malloc(n * sizeof *v);
	_cleanup_free_ char *tmp = malloc(end - from);
	if (!v || !tmp) {
		st->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++) /* a span ends where the next one's comma is */
		v[i] = (struct sorted){ sp[i], i + 1 < n ? sp[i + 1].at - 1 : end };
	memcpy(tmp, st->out.p + from, end - from);
	qsort(v, n, sizeof *v, span_cmp);
	char *w = st->out.p + from;
	for (size_t i = 0; i < n; i++) {
		if (i && span_cmp(&v[i - 1], &v[i]) == 0) {
			st->refused = true; /* a duplicate key */
			return;
		}
		if (i)
			*w++ = ',';
		memcpy(w, tmp + (v[i].s.at - from), v[i].end - v[i].s.at);
		w += v[i].end - v[i].s.at;
	}
}

/* An unsorted object in the skipped member: no output to reorder, but a
 * duplicate key is still an error. */
static void duplicates(struct stream *st, size_t base)
{
	struct span *sp = st->spans + base;
	size_t n = st->nspans - base;
	qsort(sp, n, sizeof *sp, span_cmp);
	for (size_t i = 1; i < n; i++)
		if (span_cmp(&sp[i - 1], &sp[i]) == 0)
			st->refused = true;
}

static bool value(struct stream *st, const struct ev_field *f, enum kind kind, struct id *out);

static const struct ev_field *find_field(const struct ev_field *fields, const char *key, size_t klen, int *index)
{
	for (int i = 0; fields && fields[i].key; i++)
		if (fields[i].key[0] == key[0] && strncmp(fields[i].key, key, klen) == 0 && !fields[i].key[klen]) {
			*index = i;
			return &fields[i];
		}
	return NULL;
}

/* The member's key into the output, or the start of the skipped member.
 * Checks the order against the previous key: equal is a duplicate, less
 * makes the object (and the streamed hash) unsorted. */
static bool put_key(struct stream *st, struct span *prev, bool *unsorted, const char *key, size_t klen, bool raw)
{
	if (st->ps.depth == 2 && st->skip_key && strlen(st->skip_key) == klen && memcmp(st->skip_key, key, klen) == 0) {
		if (st->skip_seen)
			st->refused = true; /* a duplicate of the skipped member */
		st->skip_seen = true;
		st->mute++;
		return true;
	}
	/* inside the skipped member too: its duplicates count */
	if (prev) {
		int c = key_cmp(prev->key, prev->klen, key, klen);
		if (c == 0)
			st->refused = true;
		if (c > 0) {
			*unsorted = true;
			st->unsorted |= !st->mute;
		}
		emit_c(st, ',');
	}
	if (!grow((void **)&st->spans, &st->capspans, st->nspans, sizeof *st->spans)) {
		st->oom = true;
		return false;
	}
	st->spans[st->nspans++] = (struct span){ key, klen, st->out.len };
	emit_string(st, key, klen, raw);
	emit_c(st, ':');
	return false;
}

/* A string member the view keeps (top-level created_at / challenge, every
 * string member of the signature). */
static void view_put(struct stream *st, json_t *obj, const char *key, size_t klen, const struct id *v)
{
	if (!obj || !v->s)
		return;
	json_t *s = json_stringn_nocheck(v->s, v->n);
	char k[32];
	if (!s || klen >= sizeof k) {
		json_decref(s);
		st->oom = !s;
		return;
	}
	memcpy(k, key, klen);
	k[klen] = '\0';
	if (json_object_set_new(obj, k, s) < 0)
		st->oom = true;
}

struct member_ctx {
	const struct ev_field *fields;
	enum kind kind;
	unsigned seen;      /* fields[i] present: bit i */
	bool unsorted;
	struct id *id;      /* K_ID_ITEM: the item's "id" */
};

/* "key": value; false on error. */
static bool member(struct stream *st, struct member_ctx *m, size_t base)
{
	ev_jp_skip_ws(&st->ps);
	const char *kpos = st->ps.p, *key;
	if (kpos >= st->ps.end || *kpos != '"') {
		ev_jp_fail(&st->ps, kpos, kpos >= st->ps.end ? "premature end of input" : "string or '}' expected");
		return false;
	}
	size_t klen;
	char *owned = NULL;
	if (ev_jp_string(&st->ps, &key, &klen, &owned) < 0) {
		st->oom = !st->ps.failed;
		return false;
	}
	bool raw = !owned;
	keep(st, &owned);
	if (owned) { /* not kept (out of memory): the key is gone */
		free(owned);
		return false;
	}
	ev_jp_skip_ws(&st->ps);
	if (st->ps.p >= st->ps.end || *st->ps.p != ':') {
		ev_jp_fail(&st->ps, st->ps.p, "':' expected");
		return false;
	}
	st->ps.p++;
	bool skipped = put_key(st, st->nspans > base ? &st->spans[st->nspans - 1] : NULL, &m->unsorted, key, klen, raw);
	int index = 0;
	const struct ev_field *f = find_field(m->fields, key, klen, &index);
	if (f)
		m->seen |= 1u << index;
	bool sig = m->kind == K_ROOT && klen == 9 && memcmp(key, "signature", 9) == 0;
	st->sig_seen |= sig;
	struct id cap = { 0 };
	bool r = value(st, f, sig ? K_SIG : K_PLAIN, &cap);
	feed(st);
	if (skipped)
		st->mute--;
	if (m->kind == K_ROOT && ((klen == 10 && !memcmp(key, "created_at", 10)) || (klen == 9 && !memcmp(key, "challenge", 9))))
		view_put(st, st->view, key, klen, &cap);
	else if (m->kind == K_SIG)
		view_put(st, st->sig, key, klen, &cap);
	else if (m->kind == K_ID_ITEM && klen == 2 && !memcmp(key, "id", 2))
		*m->id = cap;
	return r;
}

static bool object(struct stream *st, const struct ev_field *fields, enum kind kind, struct id *id)
{
	emit_c(st, '{');
	st->ps.p++;
	struct member_ctx m = { .fields = fields, .kind = kind, .id = id };
	bool muted = st->mute > 0;
	size_t base = st->nspans;
	int more = ev_jp_closes_at_once(&st->ps, '}') ? 0 : 1;
	while (more == 1)
		more = member(st, &m, base) ? ev_jp_separator(&st->ps, '}') : -1;
	if (more == 0 && m.unsorted)
		muted ? duplicates(st, base) : reorder(st, base);
	st->nspans = base;
	emit_c(st, '}');
	for (int i = 0; fields && fields[i].key; i++)
		if (fields[i].required && !(m.seen & (1u << i)))
			st->refused = true;
	return more == 0;
}

/* An id list (providers, a provider's checks): an array whose items' table
 * has a required "id". Each id well-formed, none twice. */
static bool id_list(const struct ev_field *f)
{
	for (const struct ev_field *m = f ? f->item_members : NULL; m && m->key; m++)
		if (m->required && strcmp(m->key, "id") == 0)
			return true;
	return false;
}

static int id_cmp(const void *a, const void *b)
{
	const struct id *x = a, *y = b;
	if (!x->s || !y->s) /* an item without a string id: the member checks refuse it */
		return !!x->s - !!y->s;
	return key_cmp(x->s, x->n, y->s, y->n);
}

static void check_ids(struct stream *st, size_t base)
{
	size_t n = st->nids - base;
	if (n == 0) /* (and st->ids may still be NULL) */
		return;
	struct id *v = st->ids + base;
	for (size_t i = 0; i < n; i++)
		if (v[i].s && !ev_bundle_id_ok(v[i].s, v[i].n))
			st->refused = true;
	qsort(v, n, sizeof *v, id_cmp);
	for (size_t i = 1; i < n; i++)
		if (v[i].s && v[i - 1].s && id_cmp(&v[i - 1], &v[i]) == 0)
			st->refused = true;
}

static bool element(struct stream *st, const struct ev_field *item, bool ids)
{
	if (!ids)
		return value(st, item, K_PLAIN, NULL);
	if (!grow((void **)&st->ids, &st->capids, st->nids, sizeof *st->ids)) {
		st->oom = true;
		return false;
	}
	size_t at = st->nids++;
	struct id id = { 0 };
	bool r = value(st, item, K_ID_ITEM, &id);
	st->ids[at] = id;
	return r;
}

static bool array(struct stream *st, const struct ev_field *f)
{
	struct ev_field item = { .types = f && f->items ? f->items : ~0u, .members = f ? f->item_members : NULL };
	bool checked = f && (f->items || f->item_members), ids = id_list(f);
	size_t base = st->nids;
	emit_c(st, '[');
	st->ps.p++;
	int more = ev_jp_closes_at_once(&st->ps, ']') ? 0 : 1;
	for (bool first = true; more == 1; first = false) {
		if (!first)
			emit_c(st, ',');
		more = element(st, checked ? &item : NULL, ids) ? ev_jp_separator(&st->ps, ']') : -1;
		feed(st);
	}
	emit_c(st, ']');
	if (ids && more == 0)
		check_ids(st, base);
	st->nids = base;
	return more == 0;
}

static bool literal(struct stream *st, const char *word, size_t n)
{
	if ((size_t)(st->ps.end - st->ps.p) < n || memcmp(st->ps.p, word, n) != 0) {
		ev_jp_fail(&st->ps, st->ps.p, "invalid token");
		return false;
	}
	st->ps.p += n;
	emit(st, word, n);
	return true;
}

static bool string(struct stream *st, const struct ev_field *f, struct id *out)
{
	const char *s;
	size_t n;
	char *owned = NULL;
	if (ev_jp_string(&st->ps, &s, &n, &owned) < 0) {
		st->oom = !st->ps.failed;
		return false;
	}
	emit_string(st, s, n, !owned);
	if (f && f->values) {
		bool known = false;
		for (const char *const *v = f->values; *v && !known; v++)
			known = strlen(*v) == n && memcmp(*v, s, n) == 0;
		st->refused |= !known;
	}
	if (out) {
		keep(st, &owned);
		if (!owned) /* kept, or never a copy */
			*out = (struct id){ s, n };
	}
	free(owned);
	return true;
}

static bool number(struct stream *st)
{
	const char *s = st->ps.p;
	int64_t v;
	if (!ev_jp_number(&st->ps, &v))
		return false;
	emit(st, s, (size_t)(st->ps.p - s)); /* as jq prints it: see parse_number */
	return true;
}

static unsigned type_at(char c)
{
	switch (c) {
	case '{': return EV_T_OBJ;
	case '[': return EV_T_ARR;
	case '"': return EV_T_STR;
	case 't':
	case 'f': return EV_T_BOOL;
	case 'n': return EV_T_NULL;
	default: return EV_T_INT;
	}
}

static bool container(struct stream *st, const struct ev_field *f, enum kind kind, struct id *out)
{
	if (st->ps.depth >= JQ_MAX_DEPTH) {
		ev_jp_fail(&st->ps, st->ps.p, "nested too deeply");
		return false;
	}
	bool obj = *st->ps.p == '{';
	int weight = obj ? 2 : 1; /* an object and its key, as parse.c counts */
	st->ps.depth += weight;
	bool r = obj ? object(st, f ? f->members : NULL, kind, out) : array(st, f);
	st->ps.depth -= weight;
	return r;
}

/* One value, checked against its member table entry f (NULL: anything).
 * out: the string's value, or an id item's "id". */
static bool value(struct stream *st, const struct ev_field *f, enum kind kind, struct id *out)
{
	ev_jp_skip_ws(&st->ps);
	if (st->ps.p >= st->ps.end) {
		ev_jp_fail(&st->ps, st->ps.p, "premature end of input");
		return false;
	}
	char c = *st->ps.p;
	if (f && !(type_at(c) & f->types))
		st->refused = true;
	switch (c) {
	case '{':
	case '[': return container(st, f, kind, out);
	case '"': return string(st, f, out);
	case 't': return literal(st, "true", 4);
	case 'f': return literal(st, "false", 5);
	case 'n': return literal(st, "null", 4);
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return number(st);
		ev_jp_fail(&st->ps, st->ps.p, "invalid token");
		return false;
	}
}

/* The whole document: one object, nothing after it. */
static void document(struct stream *st)
{
	static const struct ev_field root_field = { .types = EV_T_OBJ };
	struct ev_field root = root_field;
	root.members = ev_bundle_fields;
	ev_jp_skip_ws(&st->ps);
	if (st->ps.p >= st->ps.end || *st->ps.p != '{') {
		ev_jp_fail(&st->ps, st->ps.p, "'{' expected");
		return;
	}
	if (!value(st, &root, K_ROOT, NULL))
		return;
	ev_jp_skip_ws(&st->ps);
	if (st->ps.p != st->ps.end)
		ev_jp_fail(&st->ps, st->ps.p, "end of input expected");
}

static void stream_clear(struct stream *st)
{
	for (size_t i = 0; i < st->nowned; i++)
		free(st->owned[i]);
	free(st->owned);
	free(st->spans);
	free(st->ids);
	if (st->pipe)
		ev_sha512_pipe_finish(st->pipe, NULL);
	json_decref(st->view);
	json_decref(st->sig);
	sbuf_clear(&st->out);
}

/* The digest: the streamed one while every object came in order, else
 * the finished output's. */
static void finish_hash(struct stream *st, uint8_t sha512[64])
{
	if (st->pipe && !st->unsorted) {
		if (st->out.len > st->fed)
			ev_sha512_pipe_put(st->pipe, st->out.p + st->fed, st->out.len - st->fed);
		ev_sha512_pipe_finish(st->pipe, sha512);
	} else {
		if (st->pipe)
			ev_sha512_pipe_finish(st->pipe, NULL);
		SHA512((const unsigned char *)st->out.p, st->out.len, sha512);
	}
	st->pipe = NULL;
}

static int stream_start(struct stream *st, const char *data, size_t len, const char *skip_key, bool hash)
{
	/* no err buffer: the messages come from the tree reader */
	*st = (struct stream){ .ps = { .start = data, .p = data, .end = data + len }, .skip_key = skip_key };
	/* the output is about the input's size (less whitespace, more for DEL) */
	st->out.cap = len + 64;
	st->out.p = malloc(st->out.cap);
	st->view = json_object();
	st->sig = json_object();
	if (hash)
		st->pipe = ev_sha512_pipe_start();
	if (!st->out.p || !st->view || !st->sig || (hash && !st->pipe))
		return -ENOMEM;
	agsbx_prefault(st->out.p, st->out.cap);
	st->out.p[0] = '\0';
	return 0;
}

int ev_canon_stream(const char *data, size_t len, const char *skip_key, struct ev_canon_stream *o)
{
	struct stream st;
	memset(o, 0, sizeof *o);
	int r = stream_start(&st, data, len, skip_key, true);
	if (r == 0) {
		document(&st);
		r = st.oom || st.out.oom ? -ENOMEM : ok(&st) ? 0 : -EINVAL;
	}
	if (r == 0) {
		finish_hash(&st, o->sha512);
		if (st.sig_seen && json_object_set(st.view, "signature", st.sig) < 0)
			r = -ENOMEM;
	}
	if (r == 0) {
		sbuf_put(&st.out, "", 0); /* the NUL after the bytes */
		o->unsorted = st.unsorted;
		o->canonical = sbuf_take(&st.out, &o->len);
		o->view = TAKE_PTR(st.view);
	}
	stream_clear(&st);
	return r;
}

void ev_canon_stream_clear(struct ev_canon_stream *o)
{
	free(o->canonical);
	json_decref(o->view);
	memset(o, 0, sizeof *o);
}

/* The stream decides only a bundle it accepts whose signature, if any,
 * says sha512 (the digest it made; verify hashes other algorithms from
 * the tree). */
static bool stream_decides(const json_t *view)
{
	const json_t *sig = json_object_get(view, "signature");
	const char *hash = ev_jstr(sig, "hash");
	return !sig || (hash && strcmp(hash, "sha512") == 0);
}

int agsbx_bundle_parse_verify(const char *data, size_t len, json_t **bundle, uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES],
			      bool *sha512_ok, struct agsbx_error *e)
{
	*bundle = NULL;
	*sha512_ok = false;
	struct ev_canon_stream o;
	if (len <= AGSBX_BUNDLE_MAX_BYTES && ev_canon_stream(data, len, "signature", &o) == 0) {
		if (stream_decides(o.view)) {
			memcpy(sha512, o.sha512, AGSBX_BUNDLE_SHA512_BYTES);
			*sha512_ok = true;
			*bundle = TAKE_PTR(o.view);
			ev_canon_stream_clear(&o);
			return 0;
		}
		ev_canon_stream_clear(&o);
	}
	/* undecided: the tree reader's verdict, message and digest */
	return agsbx_bundle_parse_digest(data, len, bundle, sha512, sha512_ok, e);
}

/* As load.c's load(): the same read, the same messages. */
int agsbx_bundle_load_verify(const char *path, json_t **bundle, uint8_t sha512[AGSBX_BUNDLE_SHA512_BYTES],
			     bool *sha512_ok, struct agsbx_error *e)
{
	*bundle = NULL;
	*sha512_ok = false;
	char err[512] = "";
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = agsbx_read_file(path, AGSBX_BUNDLE_MAX_BYTES, &data, &len); /* one read(2) for a regular file */
	if (r == -EFBIG) {
		ev_set_err(err, sizeof err, "%s: larger than %u MiB", path, AGSBX_BUNDLE_MAX_BYTES >> 20);
		return ev_error(e, r, err);
	}
	if (r < 0) {
		ev_set_err(err, sizeof err, "%s: %s", path, agsbx_file_strerror(r));
		return ev_error(e, r, err);
	}
	struct agsbx_error why = { 0 };
	r = agsbx_bundle_parse_verify(data, len, bundle, sha512, sha512_ok, &why);
	if (r < 0)
		ev_set_err(err, sizeof err, "%s: %s", path, why.message);
	return ev_error(e, r, err);
}
