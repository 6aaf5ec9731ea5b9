/* What the attacks of every topic share: nonces, paths in the grant, the
 * skips a failed control gives, and the loopback listeners and receivers
 * the network and IPC attacks count host-side receipts on. */
#include "conformance/checks/attack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/defaults.h"
#include "base/util.h"

char *cf_nonce(void)
{
	char *n = malloc(33);
	if (n)
		agsbx_random_hex(n, 16);
	return n;
}

char *cf_host_path(const struct check_env *env, enum agsbx_root_role r, const char *rel)
{
	return agsbx_path_join(env->grant->roots[r].path, rel);
}

void cf_control_skip(struct check_out *out, const char *what, const json_t *ctl)
{
	cf_skip(out, "control failed: %s outside the sandbox too (%s); nothing to compare", what,
		   cf_result_errno(ctl));
}

/* An attack whose run printed no payload result saw nothing: skipped
 * with how the run ended and its stderr tail (cf_no_observation), never
 * read as denied. */
void cf_refused_or_unobserved(struct check_out *out, const char *attack, int sr)
{
	if (sr < 0)
		cf_reason(out, "provider refused to execute");
	else
		cf_no_observation(out, attack);
}

uid_t cf_run_uid(const struct check_env *env)
{
	return env->ctx->run_as ? env->ctx->run_uid : getuid();
}

gid_t cf_run_gid(const struct check_env *env)
{
	return env->ctx->run_as ? env->ctx->run_gid : getgid();
}

/* The real home: the password database's, where ~/.ssh lives, even when
 * $HOME was pointed elsewhere (test harnesses often do). */
const char *cf_home_of(const struct check_env *env)
{
	struct passwd *pw = getpwuid(cf_run_uid(env));
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/' && pw->pw_dir[1])
		return pw->pw_dir;
	const char *h = env->ctx->run_as ? NULL : getenv("HOME");
	return h && h[0] == '/' ? h : NULL;
}

const json_t *cf_sub(const json_t *res, const char *k)
{
	return json_object_get(res, k);
}

const char *cf_denial(const json_t *o)
{
	return cf_result_ok(o) ? "ALLOWED" : cf_result_errno(o);
}

bool cf_shares_net(const struct check_env *env)
{
	const char *n = env->probe->caps.network;
	return !n || strcmp(n, AGSBX_NET_INHERITED) == 0;
}

void cf_append(char *buf, size_t size, const char *a, const char *b)
{
	size_t l = strlen(buf);
	if (l < size)
		snprintf(buf + l, size - l, "%s%s %s", l ? ", " : "", a, b);
}

/* Non-blocking: an attack only counts what is queued on it (cf_accepted
 * drains, cf_wait_readable awaits), never blocks on it. */
int cf_loopback_socket(int family, int type, int *port)
{
	int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof *a;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *a;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 64) < 0) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	*port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int cf_accepted(int lfd)
{
	int n = 0;
	for (int fd; (fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0; n++)
		close(fd);
	return n;
}

/* Waits until FD is readable (a queued connection or datagram), at most
 * until DEADLINE_US. Loopback delivery can lag the sender's return: the
 * final ACK of a TCP handshake and a UDP datagram are handed to the
 * receive path by softirq, which a loaded machine defers to ksoftirqd.
 * So a control's arrival is awaited, not assumed after a fixed pause;
 * the deadline (the per-execution timeout) only bounds a control that
 * never arrives. */
bool cf_wait_readable(int fd, uint64_t deadline_us)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	for (;;) {
		uint64_t now = agsbx_now_us();
		if (now >= deadline_us)
			return false;
		uint64_t ms = (deadline_us - now + 999) / 1000;
		int r = poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

uint64_t cf_control_deadline(const struct check_env *env)
{
	int64_t ms = env->o->timeout_ms > 0 ? env->o->timeout_ms : AGSBX_EXEC_TIMEOUT_MS;
	return agsbx_now_us() + (uint64_t)ms * 1000u;
}

