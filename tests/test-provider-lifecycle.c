/* The handle lifecycle every provider calls (providers/common.c):
 * enter/leave around each call, release idempotent with a teardown that
 * still sees priv, priv freed once by whoever ends last, execute refused
 * after release. Driven from threads on one handle, and through the real
 * trusted_local provider (the bounded runner, for real). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "providers/provider.h"
#include "tests/lib/testlib.h"

static const struct agsbx_provider_ops test_ops = { .id = "lifecycle_test" };
static const struct agsbx_caps no_caps = { 0 };
static const struct agsbx_ctx test_ctx = { .probe_timeout_ms = 1000 };

/* A priv that records its own end instead of vanishing, so a use after
 * its free is an assertion, not undefined behaviour. */
struct probe_priv {
	int freed;            /* times priv_free ran (atomic) */
	int in_use;           /* callers inside enter/leave (atomic) */
	int freed_while_used; /* priv_free ran with a caller inside */
};

static void probe_priv_free(void *priv)
{
	struct probe_priv *p = priv;
	if (__atomic_load_n(&p->in_use, __ATOMIC_SEQ_CST) != 0)
		__atomic_store_n(&p->freed_while_used, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&p->freed, 1, __ATOMIC_SEQ_CST);
}

static struct agsbx_grant fake_grant(void)
{
	struct agsbx_grant g = { .id = "grant-lifecycle" };
	static char paths[AGSBX_ROOT_COUNT][32];
	for (int r = 0; r < AGSBX_ROOT_COUNT; r++) {
		snprintf(paths[r], sizeof paths[r], "/nonexistent/%s", agsbx_root_role_name(r));
		g.roots[r].path = paths[r];
	}
	return g;
}

static struct agsbx_handle *new_handle(const struct agsbx_grant *g, struct probe_priv *p)
{
	struct agsbx_handle *h = agsbx_handle_new(&test_ops, &test_ctx, g, &no_caps);
	ck_assert_ptr_nonnull(h);
	h->priv = p;
	h->priv_free = p ? probe_priv_free : NULL;
	return h;
}

static int teardowns;
static struct probe_priv *teardown_saw;

static void count_teardown(struct agsbx_handle *h)
{
	teardowns++;
	teardown_saw = h->priv;
}

START_TEST(test_release_refuses_and_is_idempotent)
{
	struct agsbx_grant g = fake_grant();
	struct probe_priv p = { 0 };
	struct agsbx_handle *h = new_handle(&g, &p);
	ck_assert_int_eq(agsbx_handle_health(h), 0);
	ck_assert_int_eq(agsbx_handle_enter(h, NULL), 0);
	agsbx_handle_leave(h);
	teardowns = 0;
	ck_assert(agsbx_handle_release(h, count_teardown));
	ck_assert(!agsbx_handle_release(h, count_teardown));
	ck_assert_int_eq(teardowns, 1);
	ck_assert_ptr_eq(teardown_saw, &p); /* teardown ran before priv went */
	ck_assert_int_eq(p.freed, 1);       /* idle at release: freed there */
	ck_assert_ptr_null(h->priv);
	ck_assert_int_eq(agsbx_handle_health(h), -ESTALE);
	struct agsbx_error f = { 0 };
	ck_assert_int_eq(agsbx_handle_enter(h, &f), -ESTALE);
	ck_assert_str_eq(f.reason, "released");
	ck_assert_str_eq(f.message, "lifecycle_test: execute after release");
	agsbx_handle_free(h);
	ck_assert_int_eq(p.freed, 1);
}
END_TEST

static int own_releases;

static void own_release(struct agsbx_handle *h)
{
	own_releases++;
	agsbx_handle_release(h, count_teardown);
}

/* agsbx_provider_health/release: a NULL slot is the lifecycle's own
 * (release without teardown, idempotent); a provider's release is called
 * every time. */
START_TEST(test_provider_dispatch)
{
	struct agsbx_grant g = fake_grant();
	struct probe_priv p = { 0 };
	struct agsbx_handle *h = new_handle(&g, &p);
	ck_assert_int_eq(agsbx_provider_health(h), 0);
	teardowns = 0;
	agsbx_provider_release(h);
	agsbx_provider_release(h);
	ck_assert_int_eq(teardowns, 0);
	ck_assert_int_eq(p.freed, 1);
	ck_assert_int_eq(agsbx_provider_health(h), -ESTALE);
	agsbx_handle_free(h);

	static const struct agsbx_provider_ops own_ops = { .id = "lifecycle_own", .release = own_release };
	h = agsbx_handle_new(&own_ops, &test_ctx, &g, &no_caps);
	ck_assert_ptr_nonnull(h);
	own_releases = 0;
	agsbx_provider_release(h);
	agsbx_provider_release(h);
	ck_assert_int_eq(own_releases, 2);
	ck_assert_int_eq(teardowns, 1);
	ck_assert_int_eq(agsbx_handle_health(h), -ESTALE);
	agsbx_handle_free(h);
}
END_TEST

/* Release while two calls are in flight: priv stays until the last leaves. */
START_TEST(test_priv_outlives_calls_in_flight)
{
	struct agsbx_grant g = fake_grant();
	struct probe_priv p = { 0 };
	struct agsbx_handle *h = new_handle(&g, &p);
	ck_assert_int_eq(agsbx_handle_enter(h, NULL), 0);
	ck_assert_int_eq(agsbx_handle_enter(h, NULL), 0);
	ck_assert(agsbx_handle_release(h, NULL));
	ck_assert_int_eq(p.freed, 0);
	ck_assert_ptr_eq(h->priv, &p);
	agsbx_handle_leave(h);
	ck_assert_int_eq(p.freed, 0);
	agsbx_handle_leave(h);
	ck_assert_int_eq(p.freed, 1);
	ck_assert_ptr_null(h->priv);
	agsbx_handle_free(h);
	ck_assert_int_eq(p.freed, 1);
}
END_TEST

/* A handle freed without release (an ensure that failed half-way) still
 * frees priv; one whose provider keeps priv (no hook) does not. */
START_TEST(test_free_without_release)
{
	struct agsbx_grant g = fake_grant();
	struct probe_priv p = { 0 };
	agsbx_handle_free(new_handle(&g, &p));
	ck_assert_int_eq(p.freed, 1);
	struct probe_priv kept = { 0 };
	struct agsbx_handle *h = new_handle(&g, NULL);
	h->priv = &kept;
	ck_assert(agsbx_handle_release(h, NULL));
	ck_assert_ptr_eq(h->priv, &kept);
	agsbx_handle_free(h);
	ck_assert_int_eq(kept.freed, 0);
	agsbx_handle_free(NULL);
}
END_TEST

static int runs;

static int count_run(struct agsbx_handle *h, const struct agsbx_step *step, const struct agsbx_limits *limits,
		     struct agsbx_exec_result *out, struct agsbx_error *fail)
{
	(void)step;
	(void)limits;
	(void)fail;
	runs++;
	/* Inside execute the caller holds a reference: a release now must
	 * leave priv alone. */
	ck_assert(agsbx_handle_release(h, NULL));
	ck_assert_int_eq(((struct probe_priv *)h->priv)->freed, 0);
	out->run.status = 7;
	return 0;
}

START_TEST(test_execute_framed)
{
	struct agsbx_grant g = fake_grant();
	struct probe_priv p = { 0 };
	struct agsbx_handle *h = new_handle(&g, &p);
	struct agsbx_exec_result xr;
	memset(&xr, 0xa5, sizeof xr); /* execute clears it, refused or not */
	runs = 0;
	/* The step gate runs before the provider's run. */
	static const char *const none[] = { NULL };
	struct agsbx_step bad = { .argv = none, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_error f = { 0 };
	ck_assert_int_eq(agsbx_handle_execute(h, &bad, NULL, &xr, &f, count_run), -EINVAL);
	ck_assert_str_eq(f.reason, "step_invalid");
	ck_assert_int_eq(runs, 0);
	static const char *const argv[] = { "/bin/true", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	ck_assert_int_eq(agsbx_handle_execute(h, &step, NULL, &xr, NULL, count_run), 0);
	ck_assert_int_eq(runs, 1);
	ck_assert_int_eq(xr.run.status, 7);
	ck_assert_ptr_null(xr.meta);
	/* Freed by the execute's own leave: the refused one left too. */
	ck_assert_int_eq(p.freed, 1);
	memset(&xr, 0xa5, sizeof xr);
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(agsbx_handle_execute(h, &step, NULL, &xr, &f, count_run), -ESTALE);
	ck_assert_int_eq(runs, 1);
	ck_assert_str_eq(f.reason, "released");
	ck_assert_ptr_null(xr.meta);
	ck_assert_int_eq(xr.run.status, 0);
	agsbx_handle_free(h);
}
END_TEST

/* ---- threads ----------------------------------------------------------- */

#define THREADS 8

struct race {
	struct agsbx_handle *h;
	int release_returned;  /* atomic: set right after release() returned */
	int entered;           /* successful enters (atomic) */
	int late;              /* enters that succeeded after release returned */
	int used_after_free;   /* a caller found priv freed inside enter/leave */
};

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

static void *race_caller(void *arg)
{
	struct race *rc = arg;
	for (int i = 0; i < 2000; i++) {
		bool after = __atomic_load_n(&rc->release_returned, __ATOMIC_SEQ_CST);
		if (agsbx_handle_enter(rc->h, NULL) < 0) {
			if (after)
				break; /* refused for good */
			continue;
		}
		__atomic_add_fetch(&rc->entered, 1, __ATOMIC_SEQ_CST);
		if (after)
			__atomic_add_fetch(&rc->late, 1, __ATOMIC_SEQ_CST);
		struct probe_priv *p = rc->h->priv;
		if (!p || __atomic_load_n(&p->freed, __ATOMIC_SEQ_CST))
			__atomic_store_n(&rc->used_after_free, 1, __ATOMIC_SEQ_CST);
		else
			__atomic_add_fetch(&p->in_use, 1, __ATOMIC_SEQ_CST);
		pause_us(50);
		if (p)
			__atomic_sub_fetch(&p->in_use, 1, __ATOMIC_SEQ_CST);
		agsbx_handle_leave(rc->h);
	}
	return NULL;
}

static void *race_releaser(void *arg)
{
	struct race *rc = arg;
	pause_us(5000);
	agsbx_handle_release(rc->h, count_teardown);
	__atomic_store_n(&rc->release_returned, 1, __ATOMIC_SEQ_CST);
	agsbx_handle_release(rc->h, count_teardown);
	return NULL;
}

START_TEST(test_concurrent_enter_release)
{
	struct agsbx_grant g = fake_grant();
	struct probe_priv p = { 0 };
	struct race rc = { .h = new_handle(&g, &p) };
	teardowns = 0;
	pthread_t t[THREADS + 1];
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, race_caller, &rc), 0);
	ck_assert_int_eq(pthread_create(&t[THREADS], NULL, race_releaser, &rc), 0);
	for (int i = 0; i <= THREADS; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_gt(rc.entered, 0);
	ck_assert_int_eq(rc.late, 0);
	ck_assert_int_eq(rc.used_after_free, 0);
	ck_assert_int_eq(p.freed_while_used, 0);
	ck_assert_int_eq(p.freed, 1);
	ck_assert_int_eq(teardowns, 1);
	ck_assert_int_eq(agsbx_handle_health(rc.h), -ESTALE);
	agsbx_handle_free(rc.h);
	ck_assert_int_eq(p.freed, 1);
}
END_TEST

/* ---- a real provider: trusted_local calls the helpers ------------------ */

static char *dir;

static void setup(void)
{
	dir = agsbx_test_tmpdir("lifecycle");
	ck_assert_ptr_nonnull(dir);
}

static void teardown(void)
{
	agsbx_test_rmtree(dir);
	free(dir);
}

struct tl_race {
	struct agsbx_handle *h;
	int release_returned;
	int ran, refused, late_ran, other;
};

static void *tl_caller(void *arg)
{
	struct tl_race *rc = arg;
	static const char *const argv[] = { "/bin/true", NULL };
	struct agsbx_step step = { .argv = argv, .cwd = AGSBX_ROOT_BUILD };
	struct agsbx_limits lim = { .max_output_bytes = 4096, .timeout_ms = 20000, .cancel_fd = -1 };
	/* Until five calls after release returned (each must be refused). */
	for (int i = 0, post = 0; i < 10000 && post < 5; i++) {
		bool after = __atomic_load_n(&rc->release_returned, __ATOMIC_SEQ_CST);
		post += after;
		struct agsbx_exec_result xr;
		struct agsbx_error f = { 0 };
		int r = agsbx_provider_trusted_local.execute(rc->h, &step, &lim, &xr, &f);
		if (r == 0 && xr.run.exited && xr.run.exit_code == 0)
			__atomic_add_fetch(after ? &rc->late_ran : &rc->ran, 1, __ATOMIC_SEQ_CST);
		else if (r == -ESTALE && f.reason && strcmp(f.reason, "released") == 0)
			__atomic_add_fetch(&rc->refused, 1, __ATOMIC_SEQ_CST);
		else
			__atomic_add_fetch(&rc->other, 1, __ATOMIC_SEQ_CST);
		agsbx_exec_result_clear(&xr);
	}
	return NULL;
}

START_TEST(test_trusted_local_release_under_load)
{
	struct agsbx_grant *g = NULL;
	ck_assert_int_eq(agsbx_grant_create(dir, "area", (uid_t)-1, (gid_t)-1, &g), 0);
	ck_assert_int_eq(agsbx_grant_seal(g), 0);
	struct agsbx_ctx ctx = { .probe_timeout_ms = 1000 };
	struct tl_race rc = { 0 };
	struct agsbx_error f = { 0 };
	ck_assert_int_eq(agsbx_provider_trusted_local.ensure(&agsbx_provider_trusted_local, &ctx, g, &rc.h, &f), 0);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, tl_caller, &rc), 0);
	/* Release once some executions have run. */
	for (int i = 0; i < 2000 && __atomic_load_n(&rc.ran, __ATOMIC_SEQ_CST) < 4; i++)
		pause_us(5000);
	agsbx_provider_release(rc.h);
	__atomic_store_n(&rc.release_returned, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_ge(rc.ran, 4);
	ck_assert_int_ge(rc.refused, 4 * 5);
	ck_assert_int_eq(rc.late_ran, 0);
	ck_assert_int_eq(rc.other, 0);
	ck_assert_int_eq(agsbx_provider_health(rc.h), -ESTALE);
	agsbx_provider_release(rc.h); /* idempotent */
	agsbx_handle_free(rc.h);
	agsbx_grant_destroy(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider-lifecycle");
	TCase *tc = tcase_create("helpers");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_release_refuses_and_is_idempotent);
	tcase_add_test(tc, test_priv_outlives_calls_in_flight);
	tcase_add_test(tc, test_provider_dispatch);
	tcase_add_test(tc, test_free_without_release);
	tcase_add_test(tc, test_execute_framed);
	tcase_add_test(tc, test_concurrent_enter_release);
	suite_add_tcase(s, tc);
	TCase *real = tcase_create("trusted_local");
	tcase_add_checked_fixture(real, setup, teardown);
	tcase_set_timeout(real, 120);
	tcase_add_test(real, test_trusted_local_release_under_load);
	suite_add_tcase(s, real);
	return agsbx_test_run_suite(s);
}
