/* NEGATIVE CONTROLS for the catalogue-v3 checks of conformance/escape-ipc.c.
 *
 * neg_leaked_fd: the real bubblewrap sandbox, launched through a step
 * that opens an O_PATH descriptor of a host directory (the grant's parent)
 * without close-on-exec, as runc's CVE-2024-21626 leaked one: bwrap hands
 * it to the program, whose cwd and root stay inside. From it,
 * openat(fd, "../../..") reaches the host's "/": fs.inherited_fds_contained
 * fails through that descriptor alone. */
#include "tests/negative/negative.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/strv.h"


/* bubblewrap's closed set (its probe answers from it). */
static const char *const reasons[] = {
	"bwrap_binary_missing", "bwrap_mechanism_failed", "bwrap_unsafe_as_root",
	"bwrap_user_namespace_blocked", "not_linux", "ready", NULL,
};
static const char *const config_keys[] = { "network:bool", NULL };

static int lf_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		     struct agsbx_handle **out, struct agsbx_error *fail)
{
	int r = agsbx_provider_bubblewrap.ensure(&agsbx_provider_bubblewrap, ctx, g, out, fail);
	if (r == 0)
		(*out)->ops = &neg_leaked_fd;
	return r;
}

/* bwrap's own command line behind "negctl __neg-leak-fd DIR --". */
static int lf_run(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		  struct agsbx_exec_result *o, struct agsbx_error *f)
{
	struct agsbx_raw_command rc;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	int r = n < 0 ? -errno : agsbx_provider_bubblewrap.raw_command(h, s, &rc);
	if (r < 0) {
		agsbx_fail(f, "run_failed", "negative control: cannot build the bwrap command: %s", strerror(-r));
		return r;
	}
	self[n] = '\0';
	const char *pre[] = { self, NEG_LEAK_FD_MODE, h->grant->area, "--", NULL };
	_cleanup_free_ const char **argv = agsbx_strv_concat(pre, (const char *const *)rc.argv);
	r = argv ? agsbx_provider_run(h, l, argv, (const char *const *)rc.envp, rc.cwd, o) : -ENOMEM;
	agsbx_raw_command_clear(&rc);
	return r;
}

static int lf_execute(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		      struct agsbx_exec_result *o, struct agsbx_error *f)
{
	return agsbx_handle_execute(h, s, l, o, f, lf_run);
}

static int lf_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	return agsbx_provider_bubblewrap.probe(&agsbx_provider_bubblewrap, ctx, out);
}

const struct agsbx_provider_ops neg_leaked_fd = {
	.id = "neg_leaked_fd",
	.summary = "NEGATIVE CONTROL (test only): bubblewrap with a leaked host directory descriptor",
	.reasons = reasons,
	.config_keys = config_keys,
	.probe = lf_probe,
	.ensure = lf_ensure,
	.execute = lf_execute,
	.runs_keep_orphans = true,
};

/* Not a liar: trusted_local that stalls (in the harness) when asked to
 * read the keyring canary, so a test can interrupt collect while the key
 * exists and see the signal handler remove it. The key's description goes first to
 * the FIFO AGSBX_NEG_HANG_READY names (readiness without polling). */
static const char *const tl_reasons[] = { "ready", NULL };
static const char *const no_keys[] = { NULL };

static int hk_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		     struct agsbx_handle **out, struct agsbx_error *fail)
{
	int r = agsbx_provider_trusted_local.ensure(&agsbx_provider_trusted_local, ctx, g, out, fail);
	if (r == 0)
		(*out)->ops = &neg_hang_on_key;
	return r;
}

static int hk_execute(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		      struct agsbx_exec_result *o, struct agsbx_error *f)
{
	if (s->argv[0] && s->argv[1] && s->argv[2] && strcmp(s->argv[1], "keyring") == 0) {
		const char *fifo = getenv("AGSBX_NEG_HANG_READY");
		int fd = fifo ? open(fifo, O_WRONLY | O_CLOEXEC) : -1;
		if (fd >= 0) {
			dprintf(fd, "%s\n", s->argv[2]);
			close(fd);
		}
		/* Until an interrupt cancels every execution, and then while
		 * the file AGSBX_NEG_HANG_HOLD names exists: the check's own
		 * clean-up waits, so only the signal handler can have removed
		 * the key meanwhile. */
		const char *hold = getenv("AGSBX_NEG_HANG_HOLD");
		for (int i = 0; i < 600 && (!agsbx_runner_aborted() || (hold && access(hold, F_OK) == 0)); i++)
			usleep(100 * 1000);
	}
	return agsbx_provider_trusted_local.execute(h, s, l, o, f);
}

static int hk_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	return agsbx_provider_trusted_local.probe(&agsbx_provider_trusted_local, ctx, out);
}

const struct agsbx_provider_ops neg_hang_on_key = {
	.id = "neg_hang_on_key",
	.summary = "NOT A LIAR (test only): trusted_local stalling on the keyring canary",
	.reasons = tl_reasons,
	.config_keys = no_keys,
	.probe = hk_probe,
	.ensure = hk_ensure,
	.execute = hk_execute,
	.runs_keep_orphans = true,
};
