/* The helpers every command shares (commands.h): usage errors, loading a
 * bundle, writing JSON and rendered outputs, the name the binary was
 * invoked as. cli.c only dispatches; the commands call these, so no
 * command calls back into the dispatcher (no call cycle between files). */
#include "cli/commands.h"

#include <errno.h>
#include <obstack.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/log.h"
#include "base/util.h"
#include "evidence/evidence.h"

int agsbx_usage_errorv(const char *cmd, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof buf, fmt, ap);
	agsbx_error("%s", buf);
	if (cmd)
		agsbx_hint("see 'agsbx-evidence %s --help'", cmd);
	return AGSBX_EXIT_USAGE;
}

int agsbx_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = agsbx_usage_errorv(cmd, fmt, ap);
	va_end(ap);
	return rc;
}

static int load_reported(int r, const char *err)
{
	if (r < 0) {
		agsbx_error("%s", err);
		return AGSBX_EXIT_USAGE;
	}
	return 0;
}

int agsbx_cli_load_bundle(const char *file, json_t **bundle)
{
	struct agsbx_error e = { 0 };
	return load_reported(agsbx_bundle_load(file, bundle, &e), e.message);
}

/* jansson's values from glibc's obstack, never given back: a command that
 * reads one bundle and exits frees it all at once, and a bundle is tens
 * of thousands of small allocations (malloc and free were ~16% of verify's
 * time). Bounded by the bundle (load.c caps its size). Only before any
 * jansson value exists: one malloc'd earlier would be leaked, never
 * handed to free() from here. */
/* Not under ASan: it would see one arena chunk, not each value. */
#ifndef __SANITIZE_ADDRESS__
static void *chunk_alloc(size_t n)
{
	void *p = malloc(n);
	if (p)
		agsbx_prefault(p, n);
	return p;
}
#define obstack_chunk_alloc chunk_alloc
#define obstack_chunk_free free
static struct obstack json_arena;

static void arena_exhausted(void)
{
	agsbx_error("out of memory");
	exit(AGSBX_EXIT_INTERNAL);
}

static void *arena_alloc(size_t n) { return obstack_alloc(&json_arena, n); }

static void arena_free(void *p) { (void)p; }

bool agsbx_cli_json_arena(void)
{
	obstack_alloc_failed_handler = arena_exhausted;
	obstack_init(&json_arena);
	/* Not 4 KiB chunks: a 1 MiB bundle would take a thousand of them. */
	obstack_chunk_size(&json_arena) = 256 << 10;
	json_set_alloc_funcs(arena_alloc, arena_free);
	return true;
}
#else
bool agsbx_cli_json_arena(void) { return false; }
#endif

int agsbx_cli_load_bundle_digest(const char *file, json_t **bundle, uint8_t sha512[64], bool *sha512_ok)
{
	struct agsbx_error e = { 0 };
	return load_reported(agsbx_bundle_load_digest(file, bundle, sha512, sha512_ok, &e), e.message);
}

bool agsbx_is_stdout(const char *path)
{
	return path && strcmp(path, "-") == 0;
}

int agsbx_cli_write_json(const char *path, const json_t *j)
{
	if (!agsbx_is_stdout(path))
		return agsbx_bundle_write(path, j);
	size_t len;
	_cleanup_free_ char *canon = agsbx_json_canonical(j, NULL, &len);
	if (!canon)
		return -errno;
	int r = agsbx_cli_print_json(j, JSON_SORT_KEYS);
	return r < 0 ? r : agsbx_flush_errno(stdout);
}

/* fflush's failure with the errno of the write that failed (ENOSPC on a
 * full disk or /dev/full), EIO only when the stream kept none. */
int agsbx_flush_errno(FILE *f)
{
	errno = 0;
	if (fflush(f) == EOF)
		return errno ? -errno : -EIO;
	return ferror(f) ? -EIO : 0;
}

/* JSON for a terminal or a pipe: non-ASCII as \u escapes, so a C1 or bidi
 * control from a sandbox is inert text wherever the output is shown; any
 * JSON reader decodes the same value. */
int agsbx_cli_print_json(const json_t *j, size_t flags)
{
	errno = 0;
	if (json_dumpf(j, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII | flags) < 0 || fputc('\n', stdout) == EOF)
		return errno ? -errno : -EIO;
	return 0;
}

int agsbx_output_open(struct agsbx_output *o, const char *path)
{
	memset(o, 0, sizeof *o);
	if (!path || agsbx_is_stdout(path)) {
		o->f = stdout;
		return 0;
	}
	/* The rename below would replace a device node (--output /dev/null as
	 * root) or a FIFO with a regular file. */
	int t = agsbx_check_output_target(path);
	if (t < 0) {
		agsbx_error("cannot write %s: %s", path, agsbx_file_strerror(t));
		return t;
	}
	if (asprintf(&o->tmp, "%s.tmp-XXXXXX", path) < 0 || !(o->path = strdup(path)))
		return -ENOMEM;
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;
		agsbx_error_errno(r, "cannot write %s", path);
		free(o->tmp);
		o->tmp = NULL;
		/* callers that fail here never commit or close (matrix leaked it) */
		free(o->path);
		o->path = NULL;
		return r;
	}
	fchmod(fd, 0644);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		return -errno;
	}
	return 0;
}

int agsbx_output_commit(struct agsbx_output *o)
{
	if (o->f == stdout)
		return agsbx_flush_errno(stdout);
	int r = agsbx_flush_errno(o->f);
	errno = 0;
	if (fclose(o->f) == EOF && r == 0)
		r = errno ? -errno : -EIO;
	o->f = NULL;
	if (r == 0 && rename(o->tmp, o->path) < 0)
		r = -errno;
	if (r == 0) {
		free(o->tmp);
		o->tmp = NULL;
	}
	return r;
}

void agsbx_output_closep(struct agsbx_output *o)
{
	if (!o)
		return;
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof *o);
}

static const char *invoked_as = "agsbx-evidence";

/* argv[0] as typed when it has a directory (./build/agsbx-evidence), else
 * the name PATH found; single-quoted when the shell would split it. */
const char *agsbx_cli_argv0(void)
{
	return invoked_as;
}

void agsbx_cli_set_argv0(const char *argv0)
{
	static char quoted[512];
	if (!argv0 || !strchr(argv0, '/'))
		return;
	if (argv0[strspn(argv0, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-~")] == '\0') {
		invoked_as = argv0;
		return;
	}
	if (strchr(argv0, '\'') || strlen(argv0) + 3 > sizeof quoted)
		return; /* keep the plain name rather than print a broken quote */
	snprintf(quoted, sizeof quoted, "'%s'", argv0);
	invoked_as = quoted;
}
