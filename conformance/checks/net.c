/* The network axes: loopback TCP (IPv4, IPv6, v4-mapped), UDP and the net
 * namespace; every receipt is counted host-side on the harness's listener. */
#include "conformance/checks/attack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"

/* ---- net.namespace_distinct, net.egress_denied -------------------------- */

static void net_namespace_distinct(const struct check_env *env, struct check_out *out)
{
	struct stat st;
	if (stat("/proc/self/ns/net", &st) < 0) {
		cf_skip(out, "host net namespace unreadable: %s", strerror(errno));
		return;
	}
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("ns"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "net namespace lookup");
		return;
	}
	json_t *inside = json_object_get(json_object_get(res, "ns"), "net");
	json_object_set_new(out->facts, "host_net_ns", json_integer((json_int_t)st.st_ino));
	if (!json_is_integer(inside)) {
		const char *e = json_string_value(json_object_get(json_object_get(res, "ns_errno"), "net"));
		cf_skip(out, "no observation: the net namespace inside is unreadable (%s)", e ? e : "not reported");
		return;
	}
	out->observed_pass = (ino_t)json_integer_value(inside) != st.st_ino;
	cf_reason(out, "net namespace inode inside %lld vs host %llu", (long long)json_integer_value(inside),
		  (unsigned long long)st.st_ino);
}

static void net_egress_denied(const struct check_env *env, struct check_out *out)
{
	int port = 0;
	_cleanup_close_ int lfd = cf_loopback_socket(AF_INET, SOCK_STREAM, &port);
	if (lfd < 0) {
		cf_skip(out, "cannot open a loopback listener: %s", strerror(-lfd));
		return;
	}
	char ports[16];
	snprintf(ports, sizeof ports, "%d", port);
	json_t *res, *ctl;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("connect", "127.0.0.1", ports, "2000"), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	cf_control_op(env, out, ARGS("connect", "127.0.0.1", ports, "2000"), &ctl);
	bool control = ctl && cf_result_ok(ctl);
	json_object_set_new(out->facts, "listener", json_pack("{s:s, s:i}", "address", "127.0.0.1", "port", port));
	json_object_set_new(out->facts, "control_connect_ok", json_boolean(control));
	out->observed_pass = res && json_object_get(res, "ok") && !cf_result_ok(res) && control;
	if (!res)
		cf_no_observation(out, "connect to a host loopback listener");
	else if (!control && res && json_object_get(res, "ok") && !cf_result_ok(res))
		cf_inconclusive(out, "control failed: the host could not connect to its own listener (%s)", cf_result_errno(ctl));
	else
		cf_reason(out, "connect to a host loopback listener: %s (%s); control connect %s",
			     res && !cf_result_ok(res) ? "denied" : "ALLOWED", cf_result_errno(res), control ? "ok" : "failed");
}

static void datagrams_drain(int fd, const char *inside, const char *control, int *n_in, int *n_ctl)
{
	char buf[256];
	ssize_t r;
	while ((r = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT)) >= 0) {
		buf[r] = '\0';
		*n_in += strcmp(buf, inside) == 0;
		*n_ctl += strcmp(buf, control) == 0;
	}
}

struct net_try {
	const char *label, *host, *proto;
	int fd;
	bool detached;
};

struct net_tally {
	int got, ctl_got;   /* host-side receipts: from inside, from the control */
};

/* After the control reported success: waits for its receipt on the host
 * side (see wait_readable), tallying late datagrams from inside too, as
 * the inside and control texts differ. */
static void await_control(const struct check_env *env, const struct net_try *t, const char *n_in,
			  const char *n_ctl, struct net_tally *k)
{
	bool udp = strcmp(t->proto, "udp") == 0;
	uint64_t deadline = cf_control_deadline(env);
	while (k->ctl_got == 0 && cf_wait_readable(t->fd, deadline)) {
		if (udp)
			datagrams_drain(t->fd, n_in, n_ctl, &k->got, &k->ctl_got);
		else
			k->ctl_got += cf_accepted(t->fd);
	}
}

/* One attempt inside and its control outside, each with its own text;
 * true when the sandbox was denied and the control got through
 * (host-side receipt on both). */
static bool net_pair(const struct check_env *env, struct check_out *out, const struct net_try *t, int port,
		     bool *ctl_ok, bool *unobserved, bool *refused, char *detail, size_t dsize)
{
	_cleanup_free_ char *n_in = cf_nonce(), *n_ctl = cf_nonce();
	if (!n_in || !n_ctl)
		return false;
	char ps[16];
	snprintf(ps, sizeof ps, "%d", port);
	const char *mode = t->detached ? "detached" : NULL;
	json_t *res = NULL, *ctl = NULL;
	bool udp = strcmp(t->proto, "udp") == 0;
	struct net_tally k = { 0 };
	/* Inside, 2 s bound a connect that a filter silently drops. The
	 * control is expected to get through: its bound is half the
	 * per-execution timeout (at least 2 s), so a loaded machine does not
	 * turn it into a skip, and it returns as soon as it connects. */
	char ctl_ms[24];
	snprintf(ctl_ms, sizeof ctl_ms, "%lld", (long long)(env->o->timeout_ms / 2 > 2000 ? env->o->timeout_ms / 2 : 2000));
	const char *const in_args[] = { "net", t->host, ps, t->proto, n_in, "2000", mode, NULL };
	const char *const ctl_args[] = { "net", t->host, ps, t->proto, n_ctl, ctl_ms, mode, NULL };
	*refused = cf_sandbox_op(env, out, env->h, NULL, in_args, &res, NULL) < 0;
	if (*refused)
		res = NULL;
	if (udp)
		datagrams_drain(t->fd, n_in, n_ctl, &k.got, &k.ctl_got);
	else
		k.got = cf_accepted(t->fd);
	cf_control_op(env, out, ctl_args, &ctl);
	if (cf_result_ok(ctl))
		await_control(env, t, n_in, n_ctl, &k);
	*ctl_ok = k.ctl_got > 0;
	bool denied = res && k.got == 0 && (udp || !cf_result_ok(res));
	*unobserved = !res && k.got == 0;
	json_object_set_new(out->facts, t->label,
			    json_pack("{s:s, s:i, s:b, s:b, s:s, s:i, s:b, s:s}", "host", t->host, "port", port, "detached",
				      t->detached, "denied_inside", denied, "errno_inside", cf_result_errno(res),
				      "received_from_inside", k.got, "control_received", *ctl_ok, "errno_control",
				      cf_result_errno(ctl)));
	size_t l = strlen(detail);
	snprintf(detail + l, dsize - l, "%s%s %s (%s)", l ? "; " : "", t->label, denied ? "denied" : *unobserved ? "not observed" : "REACHED",
		 !res ? "no payload result" : cf_result_ok(res) ? (udp ? (k.got ? "datagram arrived" : "sent, nothing arrived") : "connected") : cf_result_errno(res));
	return denied;
}

static void run_net_tries(const struct check_env *env, struct check_out *out, const struct net_try *tries, size_t n,
			  const int *ports)
{
	char detail[480] = "";
	bool pass = true, ctl_all = true, unobserved_any = false, reached_any = false, refused_any = false;
	for (size_t i = 0; i < n; i++) {
		bool ctl = false, unobserved = false, refused = false;
		bool denied = net_pair(env, out, &tries[i], ports[i], &ctl, &unobserved, &refused, detail, sizeof detail);
		pass &= denied;
		ctl_all &= ctl;
		unobserved_any |= unobserved;
		refused_any |= refused;
		reached_any |= !denied && !unobserved;
	}
	/* A refused execution fails, as in every other check; only a run
	 * that gave no result is a missing observation. */
	if (unobserved_any && !reached_any) {
		cf_refused_or_unobserved(out, "loopback connects and datagrams", refused_any ? -EIO : 0);
		return;
	}
	if (!ctl_all) {
		cf_skip(out, "control failed: a loopback listener was not reached from outside either; %s", detail);
		return;
	}
	out->observed_pass = pass;
	cf_reason(out, "%s; every control reached its listener outside", detail);
}

static void check_net_egress_udp_denied(const struct check_env *env, struct check_out *out)
{
	int port = 0;
	_cleanup_close_ int fd = cf_loopback_socket(AF_INET, SOCK_DGRAM, &port);
	if (fd < 0) {
		cf_skip(out, "cannot open a UDP receiver on 127.0.0.1: %s", strerror(-fd));
		return;
	}
	const struct net_try tries[] = {
		{ "udp_127.0.0.1", "127.0.0.1", "udp", fd, false },
		{ "udp_127.0.0.1_detached", "127.0.0.1", "udp", fd, true },
	};
	const int ports[] = { port, port };
	run_net_tries(env, out, tries, AGSBX_ARRAY_SIZE(tries), ports);
}

static void check_net_egress_ipv6_denied(const struct check_env *env, struct check_out *out)
{
	int p6 = 0, p4 = 0;
	_cleanup_close_ int fd6 = cf_loopback_socket(AF_INET6, SOCK_STREAM, &p6);
	_cleanup_close_ int fd4 = cf_loopback_socket(AF_INET, SOCK_STREAM, &p4);
	if (fd6 < 0 || fd4 < 0) {
		cf_skip(out, "cannot listen on %s: %s", fd6 < 0 ? "[::1]" : "127.0.0.1",
			   strerror(-(fd6 < 0 ? fd6 : fd4)));
		return;
	}
	/* ::ffff:127.0.0.1 from an AF_INET6 socket reaches the IPv4 listener:
	 * a filter that only looks at AF_INET misses it. */
	const struct net_try tries[] = {
		{ "tcp_[::1]", "::1", "tcp", fd6, false },
		{ "tcp_[::ffff:127.0.0.1]", "::ffff:127.0.0.1", "tcp", fd4, false },
		{ "tcp_[::1]_detached", "::1", "tcp", fd6, true },
	};
	const int ports[] = { p6, p4, p6 };
	run_net_tries(env, out, tries, AGSBX_ARRAY_SIZE(tries), ports);
}

const struct check_def cf_checks_net[] = {
	{ .id = "net.egress_denied", .axis = AGSBX_AXIS_NET_EGRESS, .run = net_egress_denied, .needs_handle = true,
	  .title = "a host loopback listener is unreachable (control: reachable outside)",
	  .attacks = "connects to a 127.0.0.1 TCP listener",
	  .why = "loopback services (databases, agents) are reachable without any route",
	  .control = "the same connect outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_silent_refusal" } } },
	{ .id = "net.egress_ipv6_denied", .axis = AGSBX_AXIS_NET_EGRESS, .evidence = CHECK_REFUTES, .run = check_net_egress_ipv6_denied, .needs_handle = true, .long_running = true,
	  .title = "[::1] and ::ffff:127.0.0.1 TCP listeners are unreachable, also from a detached descendant",
	  .attacks = "connects to [::1] and ::ffff:127.0.0.1 TCP listeners, also from a detached descendant",
	  .why = "filters written for AF_INET miss IPv6 and v4-mapped addresses",
	  .control = "the listeners receive the same connects outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_allow_liar" }, { "tests/test-covA-liars.c", "neg_silent_refusal" } } },
	{ .id = "net.egress_udp_denied", .axis = AGSBX_AXIS_NET_NAMESPACE, .evidence = CHECK_REFUTES, .run = check_net_egress_udp_denied, .needs_handle = true,
	  .title = "a 127.0.0.1 UDP receiver gets nothing, also from a detached descendant",
	  .attacks = "sends a nonce datagram to a 127.0.0.1 UDP receiver, also from a detached descendant",
	  .why = "TCP-only restrictions (Landlock's) let UDP through",
	  .control = "the receiver gets the control's datagram",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_silent_refusal" } } },
	{ .id = "net.namespace_distinct", .axis = AGSBX_AXIS_NET_NAMESPACE, .run = net_namespace_distinct, .needs_handle = true,
	  .title = "the net namespace differs from the host's",
	  .attacks = "compares the net namespace inode inside and outside",
	  .why = "isolated means a namespace of its own",
	  .control = "the host's namespace inode",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
};
const size_t cf_checks_net_count = AGSBX_ARRAY_SIZE(cf_checks_net);
