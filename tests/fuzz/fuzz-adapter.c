/* libFuzzer target: what an external adapter prints on stdout, through the
 * agsbx-external/1 client's own line framing (pump_stdout) and envelope
 * checks (handle_line), and a hello response through the session's
 * validation (hello_invalid). The client's translation units are included
 * so their file-local functions are reached exactly as the reader thread
 * reaches them. Properties (a violation aborts): a broken adapter always
 * carries the protocol reason and a bounded string excerpt; a response is
 * taken only for a pending id, at most once, and only in a shape the
 * bundle can hold (confine.c); a hello that validates
 * yields a well-formed reason set. */
#include "providers/external/adapter.c"
#include "providers/external/confine.c"
#include "providers/external/session.c"

#include <sys/eventfd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NPENDING 3

/* session.c's one reference into instances.c (kept out of this target
 * with the instance table): only adopt_hello interns, and nothing here
 * reaches it. */
const char *ext_intern(struct ext_instance *in, const char *s)
{
	(void)in;
	(void)s;
	abort();
}

/* confine.c's: the budget's split (one declared provider here). */
size_t agsbx_external_count(void)
{
	return 1;
}

static void check_adapter(struct ext_adapter *a)
{
	if (a->broken && (!a->vreason || strcmp(a->vreason, EXT_R_PROTOCOL) != 0))
		abort();
	/* an excerpt is cut at EXT_OFFENDING_MAX bytes, each at worst a 3-byte
	 * U+FFFD; a response dumped by the caller is cut the same way */
	if (a->voffending && (!json_is_string(a->voffending) ||
			      json_string_length(a->voffending) > 3 * EXT_OFFENDING_MAX))
		abort();
	unsigned answered = 0;
	for (struct ext_pending *p = a->pending; p; p = p->next) {
		answered += p->resp != NULL;
		/* a response taken fits the bundle: integers within +-2^53 only,
		 * at most EXT_MAX_DEPTH levels */
		if (p->resp && ext_json_unconfined(p->resp, 1))
			abort();
	}
	if (answered != a->responses)
		abort();
}

static void fuzz_stdout(const uint8_t *data, size_t size)
{
	static const char *const reasons[] = { "custom_reason", NULL };
	struct ext_adapter a = { .reasons = reasons, .next_id = NPENDING, .shutdown_id = -1 };
	struct ext_pending pend[NPENDING];
	pthread_mutex_init(&a.lock, NULL);
	a.stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	for (int i = 0; i < NPENDING; i++) {
		pend[i] = (struct ext_pending){ .id = i + 1, .efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) };
		pend[i].next = i + 1 < NPENDING ? &pend[i + 1] : NULL;
	}
	a.pending = pend;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		abort();
	/* the input fits in the pipe (libFuzzer's -max_len is 64 KiB) */
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fds[1], data + off, size - off);
		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	close(fds[1]);
	a.out_fd = fds[0];
	for (bool open = true; open;)
		pump_stdout(&a, &open);
	check_adapter(&a);
	close(fds[0]);
	for (int i = 0; i < NPENDING; i++) {
		json_decref(pend[i].resp);
		close(pend[i].efd);
	}
	close(a.stop_efd);
	json_decref(a.voffending);
	free(a.line);
	pthread_mutex_destroy(&a.lock);
}

static void fuzz_hello(const uint8_t *data, size_t size)
{
	json_t *r = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(r)) {
		json_decref(r);
		return;
	}
	if (!hello_invalid(r)) {
		/* a valid hello names at least one reason, each [a-z0-9_] */
		const json_t *reasons = json_object_get(r, "reasons");
		if (!json_is_array(reasons) || json_array_size(reasons) == 0)
			abort();
		for (size_t i = 0; i < json_array_size(reasons); i++)
			if (!reason_name_ok(json_string_value(json_array_get(reasons, i))))
				abort();
	}
	json_decref(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	/* the first byte picks the parser, the rest is what the adapter said */
	if (data[0] & 1)
		fuzz_hello(data + 1, size - 1);
	else
		fuzz_stdout(data + 1, size - 1);
	return 0;
}
