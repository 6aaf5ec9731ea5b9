/* NEGATIVE CONTROLS that lie about what a run gave back. Each claims every
 * axis and misreports every execution in one way, so the checks must turn
 * the lie into the verdict the catalogue promises for it: no result is a
 * skip ("no observation", the claim inconclusive), a refusal is a failure,
 * a forged answer is judged as given (never trusted as a pass where a
 * control or canary contradicts it). */
#include "tests/negative/negative.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

static const char *const reasons[] = { "ready", "unavailable", NULL };
static const char *const no_keys[] = { NULL };

static const struct agsbx_caps claims_everything = {
	.process_contained = true, .host_filesystem_restricted = true, .privilege_escalation_blocked = true,
	.syscalls_restricted = true, .network = AGSBX_NET_ISOLATED, .environment_scrubbed = true, .resources_bounded = true,
	.mechanism = "negative_control", .safety_class = "isolated",
};

static int p_everything(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out)
{
	memset(out, 0, sizeof *out);
	out->available = true;
	out->reason = "ready";
	out->caps = claims_everything;
	out->facts = json_pack("{s:b}", "negative_control", 1);
	return 0;
}

/* A finished run that printed out (len bytes) and err, nothing executed. */
static int forged(struct agsbx_handle *h, struct agsbx_exec_result *o, const char *out, size_t len, const char *err)
{
	memset(o, 0, sizeof *o);
	o->run.exited = true;
	o->run.out = malloc(len + 1);
	o->run.err = strdup(err);
	if (!o->run.out || !o->run.err)
		return -ENOMEM;
	memcpy(o->run.out, out, len);
	o->run.out[len] = '\0';
	o->run.out_len = o->run.out_total = len;
	o->run.err_len = o->run.err_total = strlen(err);
	o->meta = agsbx_handle_meta(h);
	return 0;
}

#define NEG(name_, execute_)                                                          \
	const struct agsbx_provider_ops name_ = {                                     \
		.id = #name_, .summary = "NEGATIVE CONTROL (test only)", .reasons = reasons, \
		.config_keys = no_keys, .probe = p_everything, .ensure = neg_ensure_with, \
		.health = neg_health, .execute = execute_, .release = neg_release };

/* Says every run was killed by SIGKILL, with a long stderr full of control
 * bytes and no output: every attack has no result inside, so each claimed
 * check is skipped with "killed by signal 9" and the stderr's tail
 * (control bytes as '?', cut with "...") in its reason. */
static int x_killed(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		    struct agsbx_exec_result *o, struct agsbx_error *f)
{
	char err[400];
	memset(err, 'k', sizeof err - 1);
	err[sizeof err - 1] = '\0';
	memcpy(err + sizeof err - 12, "\x1b[2J\tend\n \n", 11);
	int r = forged(h, o, "", 0, err);
	o->run.exited = false;
	o->run.term_signal = 9;
	o->run.status = 137;
	return r;
}
NEG(neg_killed_liar, x_killed)

/* Says every run timed out (status 124, nothing printed): skipped checks
 * name the timeout, and stderr is "empty". */
static int x_timeout(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		     struct agsbx_exec_result *o, struct agsbx_error *f)
{
	int r = forged(h, o, "", 0, "");
	o->run.exited = false;
	o->run.timed_out = true;
	o->run.status = 124;
	return r;
}
NEG(neg_timeout_liar, x_timeout)

/* Refuses every execution with a bare errno and no reason: the refusal is
 * recorded as "error" with strerror's text, and the checks fail. */
static int x_silent(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		    struct agsbx_exec_result *o, struct agsbx_error *f)
{
	memset(o, 0, sizeof *o);
	return -EPERM;
}
NEG(neg_silent_refusal, x_silent)

/* Answers with a result nested 40 levels deep (deeper than any honest
 * payload result): the harness refuses to parse it, no observation. */
static int x_deep(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		  struct agsbx_exec_result *o, struct agsbx_error *f)
{
	char out[200];
	size_t n = 0;
	n += (size_t)snprintf(out, sizeof out, "{\"ok\":false,\"errno\":\"EACCES\",\"d\":");
	for (int i = 0; i < 40; i++)
		out[n++] = '[';
	for (int i = 0; i < 40; i++)
		out[n++] = ']';
	out[n++] = '}';
	out[n++] = '\n';
	return forged(h, o, out, n, "");
}
NEG(neg_deep_liar, x_deep)

/* Answers every operation "ALLOWED" ({"ok":true}) without running it: every
 * isolation claim is contradicted by its own answer and fails, although
 * the answers carry none of the details an honest payload prints. */
static int x_allow(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		   struct agsbx_exec_result *o, struct agsbx_error *f)
{
	static const char out[] = "{\"ok\":true}\n";
	return forged(h, o, out, sizeof out - 1, "");
}
NEG(neg_allow_liar, x_allow)

/* Answers every operation "denied" (EACCES) without running it: the denials
 * look like enforcement, but the controls and canaries that a working
 * sandbox must let through (the granted write, the exit status, the
 * environment) contradict the lie, so the provider cannot come out
 * conformant. */
static int x_deny(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		  struct agsbx_exec_result *o, struct agsbx_error *f)
{
	static const char out[] = "{\"ok\":false,\"errno\":\"EACCES\"}\n";
	return forged(h, o, out, sizeof out - 1, "");
}
NEG(neg_deny_liar, x_deny)

/* Claims its output cap cut the result line (truncated, no newline) under
 * a cap large enough for any result: that must not turn a missing result
 * into an excuse; the line is simply absent (no observation). */
static int x_cut(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		 struct agsbx_exec_result *o, struct agsbx_error *f)
{
	static const char out[] = "{\"ok\":fal";
	int r = forged(h, o, out, sizeof out - 1, "");
	o->run.out_truncated = true;
	o->run.out_total = 5000;
	return r;
}
NEG(neg_cut_liar, x_cut)

/* Probes ready, then refuses to set up (a bare -EIO, no reason): every
 * check that needs a handle is blocked with "ensure refused after a ready
 * probe", never run against nothing. */
static int ensure_refuse(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx,
			 const struct agsbx_grant *g, struct agsbx_handle **out, struct agsbx_error *fail)
{
	*out = NULL;
	return -EIO;
}
const struct agsbx_provider_ops neg_ensure_refuses = {
	.id = "neg_ensure_refuses", .summary = "NEGATIVE CONTROL (test only)", .reasons = reasons,
	.config_keys = no_keys, .probe = p_everything, .ensure = ensure_refuse, .health = neg_health,
	.execute = x_silent, .release = neg_release,
};

/* $AGSBX_NEG_ENDED_<OP> = "STATUS PROGRESS": the run of OP printed
 * "agsbx-progress PROGRESS" on stderr and no result, and ended with
 * STATUS (124: the harness's timeout; above 128: a signal), as a sandbox
 * that stops a balloon says; otherwise "EACCES". */
static int x_ended(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		   struct agsbx_exec_result *o, struct agsbx_error *f, const char *op)
{
	char var[64], err[64];
	int status = 0;
	long long progress = 0;
	snprintf(var, sizeof var, "AGSBX_NEG_ENDED_%s", op);
	for (char *c = var; *c; c++)
		*c = *c == '-' ? '_' : *c;
	const char *v = getenv(var);
	if (!v || sscanf(v, "%d %lld", &status, &progress) != 2)
		return x_deny(h, s, l, o, f);
	snprintf(err, sizeof err, "agsbx-progress 0\nagsbx-progress %lld\n", progress);
	int r = forged(h, o, "", 0, err);
	o->run.status = status;
	o->run.timed_out = status == 124;
	o->run.exited = status < 128 && status != 124;
	o->run.exit_code = o->run.exited ? status : 0;
	o->run.term_signal = status > 128 ? status - 128 : 0;
	return r;
}

/* Answers operation OP (the payload's first argument) with the line in
 * $AGSBX_NEG_ANSWER_<OP> ('-' as '_'), and every other one "EACCES",
 * running nothing: a test scripts exactly the detailed lie it wants a
 * check to judge (forged capability sets, a forged kernel release, a
 * forged environment lookup). */
static int x_scripted(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		      struct agsbx_exec_result *o, struct agsbx_error *f)
{
	char var[64] = "";
	const char *op = s->argv[0] && s->argv[1] ? s->argv[1] : "";
	int n = snprintf(var, sizeof var, "AGSBX_NEG_ANSWER_%s", op);
	for (int i = 0; i < n && var[i]; i++)
		var[i] = var[i] == '-' ? '_' : var[i];
	const char *line = n > 0 && (size_t)n < sizeof var ? getenv(var) : NULL;
	if (!line)
		return x_ended(h, s, l, o, f, op);
	char out[2048];
	int len = snprintf(out, sizeof out, "%s\n", line);
	return forged(h, o, out, len > 0 && (size_t)len < sizeof out ? (size_t)len : 0, "");
}
NEG(neg_scripted_liar, x_scripted)

/* Answers every "write" ALLOWED after planting, where the sandbox was to
 * write, what $AGSBX_NEG_PLANT names instead of the file: "sym:PATH" a
 * symlink to PATH, "hard:PATH" a hard link to PATH, "fifo" a FIFO (a
 * hostile sandbox user's redirections of the file the harness reads back
 * into the bundle); every other operation "EACCES". */
static int x_plant(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
		   struct agsbx_exec_result *o, struct agsbx_error *f)
{
	const char *plant = getenv("AGSBX_NEG_PLANT");
	if (!plant || !s->argv[0] || !s->argv[1] || strcmp(s->argv[1], "write") != 0 || !s->argv[2])
		return x_deny(h, s, l, o, f);
	const char *at = s->argv[2];
	int r = strncmp(plant, "sym:", 4) == 0    ? symlink(plant + 4, at)
		: strncmp(plant, "hard:", 5) == 0 ? link(plant + 5, at)
						  : mkfifo(at, 0600);
	if (r < 0)
		return -errno;
	static const char out[] = "{\"ok\":true}\n";
	return forged(h, o, out, sizeof out - 1, "");
}
NEG(neg_plant_liar, x_plant)

/* Inverted health: unhealthy while usable, "ready" once released; it does
 * refuse executions after release: lifecycle.consistent fails on the
 * health answers alone. */
static int health_inverted(struct agsbx_handle *h) { return h->released ? 0 : -EIO; }
static int x_refuse_released(struct agsbx_handle *h, const struct agsbx_step *s, const struct agsbx_limits *l,
			     struct agsbx_exec_result *o, struct agsbx_error *f)
{
	if (h->released) {
		memset(o, 0, sizeof *o);
		agsbx_fail(f, "unavailable", "released");
		return -ESTALE;
	}
	return x_deny(h, s, l, o, f);
}
const struct agsbx_provider_ops neg_health_liar = {
	.id = "neg_health_liar", .summary = "NEGATIVE CONTROL (test only)", .reasons = reasons,
	.config_keys = no_keys, .probe = p_everything, .ensure = neg_ensure_with, .health = health_inverted,
	.execute = x_refuse_released, .release = neg_release,
};

/* Sets up once per process, then refuses every further ensure (a
 * mechanism that cannot be set up twice): the checks that set up a handle
 * of their own report the refusal, with no reason given ("?"). */
static int ensure_once(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		       struct agsbx_handle **out, struct agsbx_error *fail)
{
	static int calls;
	if (__atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST) > 0) {
		*out = NULL;
		return -EBUSY;
	}
	return neg_ensure_with(self, ctx, g, out, fail);
}
const struct agsbx_provider_ops neg_ensure_once = {
	.id = "neg_ensure_once", .summary = "NEGATIVE CONTROL (test only)", .reasons = reasons,
	.config_keys = no_keys, .probe = p_everything, .ensure = ensure_once, .health = neg_health,
	.execute = x_refuse_released, .release = neg_release,
};
