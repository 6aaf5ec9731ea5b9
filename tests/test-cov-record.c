/* An owner record (base/rundir.h) that is malformed in one way is not a
 * record: cleanup acts on nothing it cannot fully read. Each case below
 * breaks one rule of the format (token line, nonce, run_uid, canary, an
 * unknown or valueless line, a NUL, the size cap, a non-regular file, a
 * symlink) and must read as -ENOENT with nothing kept; the well-formed
 * neighbours (the limit of 64 canaries, the staged claim when the record
 * is missing) read as 0. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/rundir.h"
#include "base/util.h"
#include "tests/lib/testlib.h"

static char *dir, *run, *owner;
static char tok[64];
static const char *hex = "0123456789abcdef0123456789abcdef";

static void setup(void)
{
	dir = agsbx_test_tmpdir("cov-record");
	ck_assert_ptr_nonnull(dir);
	chmod(dir, 0755);
	run = agsbx_path_join(dir, "agsbx-run-x");
	owner = agsbx_path_join(run, AGSBX_RUNDIR_OWNER_FILE);
	ck_assert_int_eq(mkdir(run, 0755), 0);
	ck_assert_int_eq(agsbx_owner_token(tok, sizeof tok), 0);
}

static void teardown(void)
{
	agsbx_test_rmtree(dir);
	free(dir);
	free(run);
	free(owner);
}

static void spit_n(const char *path, const char *text, size_t n)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(agsbx_write_all(fd, text, n), 0);
	ck_assert_int_eq(fchmod(fd, 0644), 0);
	close(fd);
}

static int read_text(const char *text, struct agsbx_owner_record *rec)
{
	spit_n(owner, text, strlen(text));
	return agsbx_rundir_read_record(run, rec);
}

static void expect_none(const char *what, const char *text)
{
	struct agsbx_owner_record rec;
	int r = read_text(text, &rec);
	ck_assert_msg(r == -ENOENT, "%s: read %d, want -ENOENT", what, r);
	/* nothing of a rejected record is kept */
	ck_assert_msg(rec.ncanaries == 0 && !rec.has_run_uid && !rec.nonce[0] && !rec.token[0], "%s: fields kept", what);
}

START_TEST(test_malformed_records)
{
	char t[1024];
	/* each: the token line first (or not), then the rest */
	struct {
		const char *what;
		bool token;
		const char *rest;
	} cases[] = {
		{ "an empty token line", false, "\n" },
		{ "a token that is not 'pid start ns'", false, "12 x 3\n" },
		{ "a token with a trailing character", true, "x\n" },
		{ "a nonce of 31 hex digits", true, "\nnonce 0123456789abcdef0123456789abcde\n" },
		{ "a nonce with upper case", true, "\nnonce 0123456789ABCDEF0123456789abcdef\n" },
		{ "a run_uid that is not a number", true, "\nrun_uid abc\n" },
		{ "a run_uid with a suffix", true, "\nrun_uid 12x\n" },
		{ "a run_uid beyond uid_t", true, "\nrun_uid 99999999999\n" },
		{ "a negative run_uid", true, "\nrun_uid -1\n" },
		{ "two run_uid lines", true, "\nrun_uid 5\nrun_uid 5\n" },
		{ "a relative canary", true, "\ncanary home/u/.agsbx-canary-0123456789abcdef\n" },
		{ "a line without a value", true, "\nnonce\n" },
		{ "an unknown key", true, "\nsession 3\n" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		snprintf(t, sizeof t, "%s%s", cases[i].token ? tok : "", cases[i].rest);
		expect_none(cases[i].what, t);
	}
	/* a NUL inside the record */
	struct agsbx_owner_record rec;
	int n = snprintf(t, sizeof t, "%s\nnonce %s\n", tok, hex);
	t[strlen(tok) + 3] = '\0';
	spit_n(owner, t, (size_t)n);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -ENOENT);
	/* an empty file */
	spit_n(owner, "", 0);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -ENOENT);
}
END_TEST

/* 64 canaries are a record; a 65th is not. */
START_TEST(test_canary_limit)
{
	size_t cap = 128 + 64 * 48 + 64;
	char *t = malloc(cap);
	ck_assert_ptr_nonnull(t);
	size_t n = (size_t)snprintf(t, cap, "%s\nnonce %s\nrun_uid 4242\n", tok, hex);
	for (int i = 0; i < AGSBX_RUNDIR_MAX_CANARIES; i++)
		n += (size_t)snprintf(t + n, cap - n, "canary /home/u%d/.agsbx-canary-0123456789abcdef\n", i);
	struct agsbx_owner_record rec;
	ck_assert_int_eq(read_text(t, &rec), 0);
	ck_assert_uint_eq(rec.ncanaries, AGSBX_RUNDIR_MAX_CANARIES);
	ck_assert_str_eq(rec.canaries[63], "/home/u63/.agsbx-canary-0123456789abcdef");
	ck_assert_str_eq(rec.nonce, hex);
	ck_assert(rec.has_run_uid && rec.run_uid == 4242);
	ck_assert_str_eq(rec.token, tok);
	agsbx_owner_record_clear(&rec);
	ck_assert_uint_eq(rec.ncanaries, 0);
	snprintf(t + n, cap - n, "canary /home/more/.agsbx-canary-0123456789abcdef\n");
	expect_none("a 65th canary", t);
	free(t);
}
END_TEST

/* Over 64 KiB: not read at all (a record is a few lines). */
START_TEST(test_size_cap)
{
	size_t cap = (64u << 10) + 256;
	char *t = malloc(cap + 1);
	ck_assert_ptr_nonnull(t);
	size_t n = (size_t)snprintf(t, cap, "%s\n", tok);
	while (n + 60 < cap)
		n += (size_t)snprintf(t + n, cap - n, "canary /h/.agsbx-canary-0123456789abcdef\n");
	struct agsbx_owner_record rec;
	spit_n(owner, t, n);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -ENOENT);
	free(t);
}
END_TEST

/* Only a regular file in place, never followed: a FIFO (which would block
 * a reader), a directory and a symlink to a good record are no record; the
 * staged claim stands in only when the record itself is missing. */
START_TEST(test_file_kinds_and_staged)
{
	char good[160];
	snprintf(good, sizeof good, "%s\nnonce %s\n", tok, hex);
	_cleanup_free_ char *elsewhere = agsbx_path_join(dir, "record");
	_cleanup_free_ char *staged = agsbx_path_join(run, AGSBX_RUNDIR_OWNER_STAGED);
	struct agsbx_owner_record rec;
	ck_assert_int_eq(mkfifo(owner, 0644), 0);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -ENOENT);
	unlink(owner);
	ck_assert_int_eq(mkdir(owner, 0755), 0);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -ENOENT);
	rmdir(owner);
	spit_n(elsewhere, good, strlen(good));
	ck_assert_int_eq(symlink(elsewhere, owner), 0);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), -ENOENT);
	unlink(owner);
	/* the directory itself a symlink to a run dir: not followed */
	_cleanup_free_ char *link = agsbx_path_join(dir, "agsbx-run-link");
	spit_n(owner, good, strlen(good));
	ck_assert_int_eq(symlink(run, link), 0);
	ck_assert_int_eq(agsbx_rundir_read_record(link, &rec), -ENOENT);
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), 0);
	agsbx_owner_record_clear(&rec);
	unlink(owner);
	/* the staged claim, when the record is missing */
	spit_n(staged, good, strlen(good));
	ck_assert_int_eq(agsbx_rundir_read_record(run, &rec), 0);
	ck_assert_str_eq(rec.nonce, hex);
	agsbx_owner_record_clear(&rec);
	ck_assert_int_eq(agsbx_rundir_read_record("/nonexistent/agsbx-run-none", &rec), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cov-record");
	TCase *t = tcase_create("record");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_malformed_records);
	tcase_add_test(t, test_canary_limit);
	tcase_add_test(t, test_size_cap);
	tcase_add_test(t, test_file_kinds_and_staged);
	suite_add_tcase(s, t);
	return agsbx_test_run_suite(s);
}
