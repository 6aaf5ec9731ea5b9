/* SHA-512 on a second thread, fed in chunks while the caller goes on
 * producing them (verify's parser writing the canonical form): hashing a
 * 1 MiB bundle costs about as much as parsing it, and on two cores the two
 * then overlap instead of adding up.
 *
 * Bytes are copied into a small ring of chunk buffers (the producer's own
 * buffer is reused as soon as the sink returns). The hasher takes them in
 * order, so the digest is that of the bytes in the order they were put.
 * Without a thread (pthread_create failing) it hashes inline: the same
 * digest, only slower.
 *
 * The hash is libcrypto's SHA512_* (assembly for the CPU at hand: 0.95 ms
 * per MiB here against libsodium's portable C at 1.45 ms), which verify's
 * one pass waits for at its end. The low-level calls, not EVP: EVP's first
 * digest initialises OpenSSL's providers and configuration (0.8 ms, more
 * than the time saved); SHA512_Init needs nothing. They are deprecated in
 * OpenSSL 3 but kept there, and libcrypto is linked already (sshsig-pk.c). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "evidence/internal.h"

#include <errno.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 4
#define SLOT_BYTES SBUF_CHUNK

struct ev_sha512_pipe {
	SHA512_CTX st;
	pthread_t thread;
	bool threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned head, tail;            /* slots put / slots hashed, counting up */
	bool closed;
	size_t len[SLOTS];
	unsigned char buf[SLOTS][SLOT_BYTES];
};

static void *hasher(void *arg)
{
	struct ev_sha512_pipe *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->tail == p->head && !p->closed)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->tail == p->head)
			break; /* closed and drained */
		unsigned i = p->tail % SLOTS;
		pthread_mutex_unlock(&p->mu);
		SHA512_Update(&p->st, p->buf[i], p->len[i]);
		pthread_mutex_lock(&p->mu);
		p->tail++;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct ev_sha512_pipe *ev_sha512_pipe_start(void)
{
	struct ev_sha512_pipe *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	SHA512_Init(&p->st);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->threaded = pthread_create(&p->thread, NULL, hasher, p) == 0;
	return p;
}

/* One slot's worth at most: waits for a free slot, fills it, wakes the hasher. */
static void put_slot(struct ev_sha512_pipe *p, const void *data, size_t n)
{
	pthread_mutex_lock(&p->mu);
	while (p->head - p->tail == SLOTS)
		pthread_cond_wait(&p->cv, &p->mu);
	unsigned i = p->head % SLOTS;
	pthread_mutex_unlock(&p->mu);
	memcpy(p->buf[i], data, n); /* the slot is ours until head moves past it */
	p->len[i] = n;
	pthread_mutex_lock(&p->mu);
	p->head++;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void ev_sha512_pipe_put(void *pipe, const void *data, size_t n)
{
	struct ev_sha512_pipe *p = pipe;
	if (!p->threaded) {
		SHA512_Update(&p->st, data, n);
		return;
	}
	const unsigned char *d = data;
	while (n) {
		size_t k = n < SLOT_BYTES ? n : SLOT_BYTES;
		put_slot(p, d, k);
		d += k;
		n -= k;
	}
}

void ev_sha512_pipe_finish(struct ev_sha512_pipe *p, uint8_t out[64])
{
	if (!p)
		return;
	if (p->threaded) {
		pthread_mutex_lock(&p->mu);
		p->closed = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
	}
	if (out)
		SHA512_Final(out, &p->st);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
