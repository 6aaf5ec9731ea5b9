/* The filesystem axis: reads, writes, links, mounts, inherited descriptors
 * and kernel write interfaces outside the grant, each paired with a control
 * outside or a host-side postcondition; and the grant itself and residue. */
#include "conformance/checks/attack.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fsat.h"
#include "base/util.h"

/* ---- fs.grant_write, fs.readonly_grant_denied --------------------------- */

static void fs_grant_write(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = cf_nonce(), *name = NULL;
	if (!n || asprintf(&name, "gw-%s", n) < 0)
		return;
	_cleanup_free_ char *inside = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, name);
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("write", inside, n), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	/* Read through the output root's fd, never a link, only a file of the
	 * sandbox user's with one link: whatever else sits there could be a
	 * host file it cannot read, and this line goes into the bundle. */
	_cleanup_close_ int dfd = agsbx_dir_open(env->grant->roots[AGSBX_ROOT_OUTPUT].path);
	_cleanup_free_ char *got = NULL;
	uid_t owner = env->ctx->run_as ? env->ctx->run_uid : AGSBX_ANY_OWNER;
	int rr = dfd < 0 ? dfd : agsbx_read_line_at(dfd, name, owner, 1 << 16, &got);
	out->observed_pass = got && strcmp(got, n) == 0;
	json_object_set_new(out->facts, "host_read", got ? agsbx_json_string_sanitized(got, strlen(got)) : json_null());
	if (rr == -ELOOP || rr == -EMLINK || rr == -EPERM || rr == -EINVAL)
		cf_reason(out, "output/%s is not a file of the sandbox user's with one link (%s): not read", name,
			     strerror(-rr));
	else if (!res && !out->observed_pass)
		cf_reason(out, "the nonce written into output did not reach the host: the payload gave no result (%s)",
			  out->no_result);
	else
		cf_reason(out, out->observed_pass ? "the host read the nonce the sandbox wrote into output"
						     : "the nonce written into output did not reach the host (%s)",
			  cf_result_errno(res));
}

static void fs_readonly_grant_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = cf_nonce(), *newname = NULL;
	if (!n || asprintf(&newname, "ro-new-%s", n) < 0)
		return;
	_cleanup_free_ char *in_canary = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, "ro-canary.txt");
	_cleanup_free_ char *in_new = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, newname);
	_cleanup_free_ char *host_new = cf_host_path(env, AGSBX_ROOT_SOURCE, newname);
	json_t *r1, *r2;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("write", in_canary, n), &r1, NULL) < 0 ||
	    cf_sandbox_op(env, out, env->h, NULL, ARGS("write", in_new, n), &r2, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	_cleanup_free_ char *content = agsbx_read_line(env->ro_canary);
	bool unchanged = content && strcmp(content, env->ro_canary_content) == 0;
	bool absent = access(host_new, F_OK) < 0;
	json_object_set_new(out->facts, "source_canary_unchanged", json_boolean(unchanged));
	json_object_set_new(out->facts, "new_file_absent", json_boolean(absent));
	if ((!r1 || !r2) && unchanged && absent) {
		cf_no_observation(out, "write into the read-only source root");
		return;
	}
	out->observed_pass = r1 && r2 && !cf_result_ok(r1) && !cf_result_ok(r2) && unchanged && absent;
	cf_reason(out, "overwrite in source: %s; create in source: %s; host content %s",
		     r1 && !cf_result_ok(r1) ? cf_result_errno(r1) : "allowed", r2 && !cf_result_ok(r2) ? cf_result_errno(r2) : "allowed",
		     unchanged && absent ? "unchanged" : "CHANGED");
}

/* ---- argv[0] variants of the filesystem attacks ------------------------- */

/* What one variant of a denial showed. A variant whose interpreter does
 * not exist (or is refused) inside cannot break the claim: it is recorded
 * as not_run; the direct variant must always be conclusive. */
enum outcome { O_DENIED, O_ALLOWED, O_NOT_RUN };

struct variants {
	json_t *list;                 /* facts.argv_variants */
	json_t *argv0;                /* facts.argv0_tried */
	bool direct_denied, any_allowed;
	const char *direct_errno;
	char summary[256];
};

static void variant_record(struct variants *v, const struct check_env *env, enum agsbx_via via, enum outcome o,
			   const json_t *res)
{
	static const char *const names[] = { "denied", "ALLOWED", "not_run" };
	_cleanup_free_ char *payload = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, AGSBX_PAYLOAD_NAME);
	const char *argv0 = via == AGSBX_VIA_DIRECT && payload ? payload : cf_via_argv0(via);
	if (via == AGSBX_VIA_DIRECT) {
		v->direct_denied = o == O_DENIED;
		v->direct_errno = cf_result_errno(res);
	} else {
		size_t len = strlen(v->summary);
		snprintf(v->summary + len, sizeof v->summary - len, "%svia %s: %s", len ? ", " : "", argv0, names[o]);
	}
	v->any_allowed |= o == O_ALLOWED;
	json_array_append_new(v->argv0, json_string(argv0));
	json_array_append_new(v->list, json_pack("{s:s, s:s, s:s}", "argv0", argv0, "outcome", names[o], "errno",
						 cf_result_errno(res)));
}

static bool variants_pass(const struct variants *v)
{
	return v->direct_denied && !v->any_allowed;
}

/* The direct run gave no result and no variant showed the attack work. */
static bool variants_unobserved(const struct variants *v)
{
	return !v->direct_denied && !v->any_allowed;
}

static void variants_facts(struct variants *v, struct check_out *out)
{
	json_object_set_new(out->facts, "argv_variants", v->list);
	json_object_set_new(out->facts, "argv0_tried", v->argv0);
}

/* A read of target through every variant; O_ALLOWED when the secret shows
 * up or the payload reports success. false when the provider refused the
 * direct run. */
static bool read_variants(const struct check_env *env, struct check_out *out, const char *op, const char *target,
			  const char *link_prefix, struct variants *v, bool *leaked_any)
{
	for (int via = 0; via < AGSBX_VIA_COUNT; via++) {
		_cleanup_free_ char *link = NULL, *n = cf_nonce(), *name = NULL;
		if (link_prefix) {
			if (!n || asprintf(&name, "%s-%s-%d", link_prefix, n, via) < 0)
				return false;
			link = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, name);
		}
		struct agsbx_exec_result xr = { 0 };
		json_t *res;
		const char *const *args = link ? ARGS(op, link, target) : ARGS(op, target);
		if (cf_sandbox_op_via(env, out, env->h, NULL, via, args, &res, &xr) < 0) {
			if (via == AGSBX_VIA_DIRECT)
				return false;
			variant_record(v, env, via, O_NOT_RUN, NULL);
			continue;
		}
		bool leaked = cf_run_output_contains(&xr.run, env->canary_secret);
		agsbx_exec_result_clear(&xr);
		*leaked_any |= leaked;
		variant_record(v, env, via, leaked || (res && cf_result_ok(res)) ? O_ALLOWED : res ? O_DENIED : O_NOT_RUN, res);
	}
	return true;
}

/* A denial counts once the read was also refused through openat2 and
 * io_uring (cf_read_alternates): a sandbox that mediates open(2) alone
 * (a ptrace path translator) lets those through. */
static void fs_host_read_denied(const struct check_env *env, struct check_out *out)
{
	struct variants v = { .list = json_array(), .argv0 = json_array() };
	bool leaked = false;
	if (!read_variants(env, out, "read", env->canary_file, NULL, &v, &leaked)) {
		variants_facts(&v, out);
		cf_reason(out, "provider refused to execute");
		return;
	}
	char alt[128];
	int alt_r = cf_read_alternates(env, out, env->canary_file, env->canary_secret, alt, sizeof alt);
	json_t *ctl;
	cf_control_op(env, out, ARGS("read", env->canary_file), &ctl);
	bool control = ctl && cf_result_ok(ctl);
	bool denied = variants_pass(&v) && alt_r == 0;
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	json_object_set_new(out->facts, "control_read_ok", json_boolean(control));
	variants_facts(&v, out);
	out->observed_pass = denied && control;
	if (variants_unobserved(&v) && alt_r != 1)
		cf_no_observation(out, "read of a 0644 canary outside the grant");
	else if (variants_pass(&v) && alt_r < 0)
		cf_no_observation(out, "read of a 0644 canary outside the grant through openat2 and io_uring");
	else if (!control && denied)
		cf_inconclusive(out, "control failed: the canary is not readable outside the sandbox either (%s)",
			     cf_result_errno(ctl));
	else
		cf_reason(out, "read of a 0644 canary outside the grant: %s inside (open %s) [%s] [%s]; control read %s outside",
			  denied ? "denied" : "ALLOWED", v.direct_denied ? v.direct_errno : "ALLOWED", v.summary, alt,
			  control ? "ok" : "FAILED");
}

static void fs_host_write_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = cf_nonce(), *ctl_path = NULL;
	if (!n || asprintf(&ctl_path, "%s/ctl-%s", env->canary_wdir, n) < 0)
		return;
	struct variants v = { .list = json_array(), .argv0 = json_array() };
	bool absent_all = true;
	for (int via = 0; via < AGSBX_VIA_COUNT; via++) {
		_cleanup_free_ char *in = NULL;
		if (asprintf(&in, "%s/hw-%s-%d", env->canary_wdir, n, via) < 0)
			break;
		json_t *res;
		if (cf_sandbox_op_via(env, out, env->h, NULL, via, ARGS("write", in, n), &res, NULL) < 0) {
			if (via == AGSBX_VIA_DIRECT) {
				variants_facts(&v, out);
				cf_reason(out, "provider refused to execute");
				return;
			}
			variant_record(&v, env, via, O_NOT_RUN, NULL);
			continue;
		}
		bool absent = access(in, F_OK) < 0;
		absent_all &= absent;
		variant_record(&v, env, via, !absent || (res && cf_result_ok(res)) ? O_ALLOWED : res ? O_DENIED : O_NOT_RUN, res);
	}
	json_t *ctl;
	cf_control_op(env, out, ARGS("write", ctl_path, n), &ctl);
	bool control = ctl && cf_result_ok(ctl) && access(ctl_path, F_OK) == 0;
	json_object_set_new(out->facts, "absent_on_host", json_boolean(absent_all));
	json_object_set_new(out->facts, "control_write_ok", json_boolean(control));
	out->observed_pass = variants_pass(&v) && absent_all && control;
	if (variants_unobserved(&v) && absent_all)
		cf_no_observation(out, "create outside the grant");
	else if (!control && variants_pass(&v) && absent_all)
		cf_inconclusive(out, "control failed: cannot create in the canary dir outside the sandbox either (%s)",
			     cf_result_errno(ctl));
	else if (!control)
		cf_reason(out, "create outside the grant: ALLOWED [%s], file(s) %s on the host; control create failed",
			     v.summary, absent_all ? "absent" : "PRESENT");
	else
		cf_reason(out, "create outside the grant: %s (%s) [%s], file(s) %s on the host; control create ok",
			     v.direct_denied ? "denied" : "ALLOWED", v.direct_errno, v.summary,
			     absent_all ? "absent" : "PRESENT");
	variants_facts(&v, out);
}

static void fs_symlink_escape_denied(const struct check_env *env, struct check_out *out)
{
	struct variants v = { .list = json_array(), .argv0 = json_array() };
	bool leaked = false;
	if (!read_variants(env, out, "symlink-read", env->canary_file, "link", &v, &leaked)) {
		variants_facts(&v, out);
		cf_reason(out, "provider refused to execute");
		return;
	}
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	out->observed_pass = variants_pass(&v);
	if (variants_unobserved(&v))
		cf_no_observation(out, "read of the canary through a symlink in a writable root");
	else
		cf_reason(out, "read of the canary through a symlink in a writable root: %s (%s) [%s]",
			  v.direct_denied ? "denied" : "ALLOWED", v.direct_errno, v.summary);
	variants_facts(&v, out);
}

/* Whether a mount attempted unclaimed stays in the sandbox: its mount
 * namespace is not the host's, and either a user namespace of its own
 * owns it (a less privileged mount namespace propagates nothing back,
 * mount_namespaces(7)) or the payload holds no capability to mount with.
 * Else why not, in why. */
static bool remount_contained(const struct check_env *env, struct check_out *out, char *why, size_t size)
{
	struct stat mnt, user;
	json_t *res, *st;
	if (stat("/proc/self/ns/mnt", &mnt) < 0 || stat("/proc/self/ns/user", &user) < 0) {
		snprintf(why, size, "the host's namespaces are unreadable (%s)", strerror(errno));
		return false;
	}
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("ns"), &res, NULL) < 0 || !res) {
		snprintf(why, size, "the sandbox's mount namespace was not observed (%s)",
			 out->no_result[0] ? out->no_result : "provider refused to execute");
		return false;
	}
	const json_t *m = json_object_get(json_object_get(res, "ns"), "mnt");
	const json_t *u = json_object_get(json_object_get(res, "ns"), "user");
	if (!json_is_integer(m) || (ino_t)json_integer_value(m) == mnt.st_ino) {
		snprintf(why, size, "%s", json_is_integer(m) ? "the sandbox shares the host's mount namespace"
							      : "the sandbox's mount namespace is unreadable");
		return false;
	}
	if (json_is_integer(u) && (ino_t)json_integer_value(u) != user.st_ino)
		return true;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("status"), &st, NULL) == 0 &&
	    json_is_true(json_object_get(st, "cap_eff_zero")))
		return true;
	snprintf(why, size, "the sandbox's own mount namespace belongs to the host's user namespace and the payload may "
			    "hold capabilities (a mount could propagate to the host)");
	return false;
}

static void fs_remount_denied(const struct check_env *env, struct check_out *out)
{
	/* No host control. Unclaimed, attempted only where a mount that
	 * succeeds stays in the sandbox's own mount namespace: outside a
	 * sandbox it would change the host's mount table. */
	char why[300];
	if (!env->required && !remount_contained(env, out, why, sizeof why)) {
		cf_skip(out, "not attempted: the provider does not claim host_filesystem_restricted, and %s", why);
		json_object_set_new(out->facts, "attempted", json_false());
		return;
	}
	json_object_set_new(out->facts, "attempted", json_true());
	_cleanup_free_ char *src = agsbx_handle_path(env->h, AGSBX_ROOT_SOURCE, NULL);
	json_t *res;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("remount", src), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	if (!res) {
		cf_no_observation(out, "remount and tmpfs mount");
		return;
	}
	out->observed_pass = json_object_get(res, "ok") && !cf_result_ok(res);
	json_t *rm = json_object_get(res, "remount"), *tm = json_object_get(res, "tmpfs");
	cf_reason(out, "remount read-write: %s; mount tmpfs: %s", cf_result_ok(rm) ? "ALLOWED" : cf_result_errno(rm),
		     cf_result_ok(tm) ? "ALLOWED" : cf_result_errno(tm));
}

/* ---- fs.hardlink_alias_denied ------------------------------------------- */

static void check_fs_hardlink_alias_denied(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = cf_nonce(), *name = NULL, *ctl_path = NULL;
	if (!n || asprintf(&name, "alias-%s", n) < 0 || asprintf(&ctl_path, "%s/alias-%s", env->canary_wdir, n) < 0)
		return;
	_cleanup_free_ char *inside = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, name);
	_cleanup_free_ char *host = agsbx_path_join(env->grant->roots[AGSBX_ROOT_OUTPUT].path, name);
	struct agsbx_exec_result xr = { 0 };
	json_t *res, *ctl;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("link-read", env->canary_file, inside), &res, &xr) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	bool leaked = cf_run_output_contains(&xr.run, env->canary_secret);
	agsbx_exec_result_clear(&xr);
	struct stat a, c;
	bool alias = host && lstat(host, &a) == 0 && stat(env->canary_file, &c) == 0 && a.st_ino == c.st_ino &&
		     a.st_dev == c.st_dev;
	cf_control_op(env, out, ARGS("link-read", env->canary_file, ctl_path), &ctl);
	bool control = json_is_true(cf_sub(ctl, "link_ok"));
	unlink(ctl_path);
	json_object_set_new(out->facts, "alias_on_host", json_boolean(alias));
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	json_object_set_new(out->facts, "control_link_ok", json_boolean(control));
	if (!control) {
		cf_skip(out, "control failed: the canary cannot be hard-linked outside the sandbox either (%s)",
			   json_string_value(cf_sub(ctl, "link_errno")) ?: "?");
		return;
	}
	if (!res && !alias && !leaked) {
		cf_no_observation(out, "hard link to the canary");
		return;
	}
	out->observed_pass = res && !json_is_true(cf_sub(res, "link_ok")) && !alias && !leaked;
	bool made = json_is_true(cf_sub(res, "link_ok"));
	cf_reason(out, "hard link to the canary inside the output root: %s%s%s; alias %s on the host; control link ok",
		  made ? "MADE" : res ? "denied (" : "no payload result", made || !res ? "" : json_string_value(cf_sub(res, "link_errno")) ?: "?",
		  made || !res ? "" : ")", alias ? "PRESENT" : "absent");
}

/* ---- fs.no_host_residue ------------------------------------------------- */

/* Top-level names of DIR (sorted JSON array; empty when unreadable). */
static json_t *inventory(const char *dir)
{
	json_t *a = json_array();
	_cleanup_closedir_ DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			json_array_append_new(a, json_string(e->d_name));
	return a;
}

static bool in_array(const json_t *a, const char *s)
{
	for (size_t i = 0; i < json_array_size(a); i++)
		if (strcmp(json_string_value(json_array_get(a, i)), s) == 0)
			return true;
	return false;
}

struct place {
	const char *label;
	char *dir;
	bool shared;              /* other processes write here too (/tmp, $HOME) */
	json_t *before;
};

/* Is DIR/NAME, or something under it, a mount point inside the sandbox
 * (MOUNTS: newline-separated, from the payload's `mounts`)? */
static bool is_sandbox_mount(const char *mounts, const char *dir, const char *name)
{
	_cleanup_free_ char *p = agsbx_path_join(dir, name);
	size_t pl = p ? strlen(p) : 0;
	for (const char *m = mounts; p && m && *m; m = strchr(m, '\n') ? strchr(m, '\n') + 1 : NULL) {
		size_t len = strcspn(m, "\n");
		if (len >= pl && strncmp(m, p, pl) == 0 && (len == pl || m[pl] == '/'))
			return true;
	}
	return false;
}

/* New entries of P since its inventory. Nothing but the sandbox writes in
 * the work dir and the grant; /tmp and $HOME are shared with every other
 * process on the host, so there only an entry the sandbox has a mount
 * point on counts (a bwrap mount-point stub); the rest is recorded. */
static json_t *new_entries(const struct place *p, const char *mounts, json_t *ignored)
{
	json_t *now = inventory(p->dir), *added = json_array();
	for (size_t i = 0; i < json_array_size(now); i++) {
		const char *name = json_string_value(json_array_get(now, i));
		if (in_array(p->before, name))
			continue;
		if (p->shared && !is_sandbox_mount(mounts, p->dir, name))
			json_array_append_new(ignored, json_string(name));
		else
			json_array_append_new(added, json_string(name));
	}
	json_decref(now);
	return added;
}

/* One inventoried run; returns the number of new entries (recorded). */
static int residue_attempt(const struct check_env *env, struct check_out *out, struct place *pl, size_t np,
			   const char *skip_name, json_t *record)
{
	for (size_t i = 0; i < np; i++)
		pl[i].before = inventory(pl[i].dir);
	_cleanup_free_ char *inside = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, skip_name);
	const char *tmp = pl[np - 2].dir, *home = pl[np - 1].dir;
	json_t *m = NULL;
	int r1 = cf_sandbox_op(env, out, env->h, NULL, home ? ARGS("mounts", tmp, home) : ARGS("mounts", tmp), &m, NULL);
	int r2 = cf_sandbox_op(env, out, env->h, NULL, ARGS("write", inside, "x"), NULL, NULL);
	const char *mounts = json_string_value(cf_sub(m, "mount_points"));
	/* In the host's own mount namespace (landlock, trusted_local) every
	 * mount point is the host's: the sandbox made none, so nothing new in
	 * a shared place is its stub (another process's dockerd may be
	 * mounting under /tmp right now). */
	struct stat hs;
	const json_t *mns = cf_sub(m, "mnt_ns");
	bool own_ns = !(json_is_integer(mns) && stat("/proc/self/ns/mnt", &hs) == 0 &&
			(ino_t)json_integer_value(mns) == hs.st_ino);
	if (!own_ns)
		mounts = NULL;
	json_object_set_new(record, "sandbox_has_own_mount_namespace", json_boolean(own_ns));
	json_object_set_new(record, "sandbox_mount_points_in_tmp_or_home", mounts ? json_string(mounts) : json_null());
	int found = r1 < 0 || r2 < 0 ? -1 : 0;
	json_t *ignored = json_array();
	for (size_t i = 0; i < np; i++) {
		json_t *added = new_entries(&pl[i], mounts, ignored);
		size_t j;
		json_t *v;
		json_array_foreach(added, j, v)
			if (strcmp(json_string_value(v), skip_name) != 0 && found >= 0)
				found++;
		json_object_set_new(record, pl[i].label, added);
		json_decref(pl[i].before);
		pl[i].before = NULL;
	}
	json_object_set_new(record, "shared_new_not_attributable", ignored);
	return found;
}

static void check_fs_no_host_residue(const struct check_env *env, struct check_out *out)
{
	_cleanup_free_ char *n = cf_nonce(), *name = NULL, *area = NULL;
	if (!n || asprintf(&name, "residue-%s", n) < 0)
		return;
	area = strdup(env->grant->area);
	const char *home = cf_home_of(env);
	struct place pl[] = {
		{ "work_dir", strdup(env->o->work_dir), false, NULL },
		{ "grant_parent", area ? strdup(area) : NULL, false, NULL },
		{ "output", strdup(env->grant->roots[AGSBX_ROOT_OUTPUT].path), false, NULL },
		{ "build", strdup(env->grant->roots[AGSBX_ROOT_BUILD].path), false, NULL },
		{ "tmp", strdup("/tmp"), true, NULL },
		{ "home", home ? strdup(home) : NULL, true, NULL },
	};
	json_t *rec = json_object();
	int found = residue_attempt(env, out, pl, AGSBX_ARRAY_SIZE(pl), name, rec);
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(pl); i++)
		free(pl[i].dir);
	json_object_set_new(out->facts, "new_entries", rec);
	if (found < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	out->observed_pass = found == 0;
	cf_reason(out, found == 0 ? "no new entry in the work dir, the grant's parent, its writable roots, /tmp or "
				       "$HOME after sandboxed runs"
				     : "%d new entr%s left on the host by sandboxed runs (see facts)",
		     found, found == 1 ? "y" : "ies");
}

/* ---- fs.inherited_fds_contained ----------------------------------------- */

/* A read of the canary through a base: "READ" when the secret came back. */
static const char *through(const json_t *entry, const char *secret, bool *read)
{
	const json_t *r = cf_sub(entry, "canary_read");
	const char *c = json_string_value(cf_sub(r, "content"));
	bool got = cf_result_ok(r) && c && strcmp(c, secret) == 0;
	*read |= got;
	return !r ? "not a directory" : got ? "READ" : cf_result_ok(r) ? "another file" : cf_result_errno(r);
}

/* "fd 7 dir /x (O_PATH): READ; cwd /out: ENOENT; ..." into detail;
 * true when any base read the secret. */
static bool fds_summary(const json_t *res, const char *secret, char *detail, size_t cap)
{
	bool read = false;
	size_t i;
	const json_t *v;
	json_array_foreach(cf_sub(res, "descriptors"), i, v) {
		size_t l = strlen(detail);
		const char *how = through(v, secret, &read);
		snprintf(detail + l, cap - l, "%sfd %lld %s %s%s: %s", l ? "; " : "", (long long)json_integer_value(cf_sub(v, "fd")),
			 json_string_value(cf_sub(v, "type")) ?: "?", json_string_value(cf_sub(v, "target")) ?: "(no target)",
			 json_is_true(cf_sub(v, "o_path")) ? " (O_PATH)" : "", how);
	}
	json_array_foreach(cf_sub(res, "bases"), i, v) {
		size_t l = strlen(detail);
		const char *how = through(v, secret, &read);
		snprintf(detail + l, cap - l, "%s%s %s: %s", l ? "; " : "", json_string_value(cf_sub(v, "base")) ?: "?",
			 json_string_value(cf_sub(v, "target")) ?: "(no target)", how);
	}
	return read;
}

static void check_fs_inherited_fds_contained(const struct check_env *env, struct check_out *out)
{
	struct agsbx_exec_result xr = { 0 };
	json_t *res = NULL, *ctl = NULL;
	int sr = cf_sandbox_op(env, out, env->h, NULL, ARGS("fds", env->canary_file), &res, &xr);
	bool leaked = sr == 0 && cf_run_output_contains(&xr.run, env->canary_secret);
	cf_control_op(env, out, ARGS("fds", env->canary_file), &ctl);
	char in_detail[300] = "", ctl_detail[300] = "";
	bool read_in = fds_summary(res, env->canary_secret, in_detail, sizeof in_detail);
	bool read_ctl = fds_summary(ctl, env->canary_secret, ctl_detail, sizeof ctl_detail);
	json_object_set_new(out->facts, "canary", json_string(env->canary_file));
	json_object_set_new(out->facts, "descriptors_inside", json_deep_copy(cf_sub(res, "descriptors")) ?: json_null());
	json_object_set_new(out->facts, "bases_inside", json_deep_copy(cf_sub(res, "bases")) ?: json_null());
	json_object_set_new(out->facts, "secret_in_output", json_boolean(leaked));
	json_object_set_new(out->facts, "control_read", json_boolean(read_ctl));
	if (!res && !leaked) {
		cf_refused_or_unobserved(out, "list descriptors and read the canary through them", sr);
		agsbx_exec_result_clear(&xr);
		return;
	}
	agsbx_exec_result_clear(&xr);
	if (!read_ctl && !leaked && !read_in) {
		cf_skip(out, "control failed: the canary is not readable outside through cwd or root either [%s]", ctl_detail);
		return;
	}
	out->observed_pass = !read_in && !leaked;
	cf_reason(out, "inside, %lld descriptor(s) beyond 0-2; canary %s through: %s; control read it outside",
		  (long long)json_integer_value(cf_sub(res, "count")), read_in || leaked ? "READ" : "not read", in_detail);
}

/* ---- fs.kernel_interfaces_readonly -------------------------------------- */

struct iface_tally {
	int opened_in, opened_ctl;
	char in[200], ctl[160];
};

/* Interface by interface: what the sandbox and the control got. */
static json_t *iface_table(const json_t *res, const json_t *ctl, struct iface_tally *t)
{
	json_t *table = json_object();
	const json_t *w = cf_sub(res, "w"), *cw = cf_sub(ctl, "w");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)w, k, v) {
		const char *in = json_string_value(v), *out = json_string_value(cf_sub(cw, k));
		bool o_in = in && (!strcmp(in, "opened")), o_ctl = out && !strcmp(out, "opened");
		t->opened_in += o_in;
		t->opened_ctl += o_ctl;
		if (o_in)
			cf_append(t->in, sizeof t->in, k, "OPENED");
		else if (in && strcmp(in, "absent") != 0)
			cf_append(t->in, sizeof t->in, k, in);
		if (out && strcmp(out, "absent") != 0)
			cf_append(t->ctl, sizeof t->ctl, k, out);
		json_object_set_new(table, k, json_pack("{s:s, s:s, s:b}", "inside", in ? in : "no result", "control",
							out ? out : "no result", "opened_inside", o_in));
	}
	return table;
}

static const char *mount_summary(const json_t *m, char *buf, size_t size)
{
	if (!json_is_true(cf_sub(m, "attempted")))
		snprintf(buf, size, "%s", json_string_value(cf_sub(m, "why")) ?: "no result");
	else
		snprintf(buf, size, "cgroup v1 (%s) %s, cgroup2 %s", json_string_value(cf_sub(m, "cgroup1_controller")) ?: "?",
			 json_string_value(cf_sub(m, "cgroup1")) ?: "?", json_string_value(cf_sub(m, "cgroup2")) ?: "?");
	return buf;
}

/* Fails where the sandbox opened any interface for write (whatever the
 * control did: one the control could not open is worse) or was permitted
 * a cgroup mount; passes where the control opened at least one and the
 * sandbox none; otherwise (the control opened none: an unprivileged user
 * outside) a skip that says so. */
static void check_fs_kernel_interfaces_readonly(const struct check_env *env, struct check_out *out)
{
	struct stat st;
	if (stat("/proc/self/ns/mnt", &st) < 0) {
		cf_skip(out, "the host mount namespace cannot be read: %s", strerror(errno));
		return;
	}
	char ino[32];
	snprintf(ino, sizeof ino, "%llu", (unsigned long long)st.st_ino);
	_cleanup_free_ char *in_out = agsbx_handle_path(env->h, AGSBX_ROOT_OUTPUT, NULL);
	json_t *res, *ctl;
	if (cf_sandbox_op(env, out, env->h, NULL, ARGS("kernel-ifaces", ino, in_out), &res, NULL) < 0) {
		cf_reason(out, "provider refused to execute");
		return;
	}
	cf_control_op(env, out, ARGS("kernel-ifaces", ino, env->grant->roots[AGSBX_ROOT_OUTPUT].path), &ctl);
	struct iface_tally t = { 0 };
	json_object_set_new(out->facts, "interfaces", iface_table(res, ctl, &t));
	json_object_set_new(out->facts, "mount_inside", json_incref((json_t *)(cf_sub(res, "mount") ?: json_null())));
	json_object_set_new(out->facts, "recorded_inside", json_pack("{s:O?, s:O?, s:O?}", "kcore", cf_sub(res, "kcore"),
								      "kallsyms", cf_sub(res, "kallsyms"), "debugfs", cf_sub(res, "debugfs")));
	json_object_set_new(out->facts, "recorded_control", json_pack("{s:O?, s:O?, s:O?}", "kcore", cf_sub(ctl, "kcore"),
								       "kallsyms", cf_sub(ctl, "kallsyms"), "debugfs", cf_sub(ctl, "debugfs")));
	json_int_t mounts = json_integer_value(cf_sub(res, "mounts_permitted"));
	char m[160];
	mount_summary(cf_sub(res, "mount"), m, sizeof m);
	if (!res) {
		cf_no_observation(out, "zero-byte opens for write of kernel interfaces");
		return;
	}
	if (!json_is_object(cf_sub(res, "w"))) {
		cf_reason(out, "the payload reported no interface (%s)", cf_result_errno(res));
		return;
	}
	if (t.opened_in == 0 && mounts == 0 && t.opened_ctl == 0) {
		cf_skip(out, "control failed: as uid %d outside no kernel interface opens for write either (%s); the "
			     "check shows something only where code runs as uid 0 inside. Inside: %s; mounts: %s",
			(int)(env->ctx->run_as ? env->ctx->run_uid : getuid()), t.ctl[0] ? t.ctl : "none present",
			t.in[0] ? t.in : "none present", m);
		return;
	}
	out->observed_pass = t.opened_in == 0 && mounts == 0;
	cf_reason(out, "opened for write inside: %d (%s); mounts: %s; control opened %d outside; kallsyms %s, kcore %s, "
		       "debugfs %s inside (recorded)", t.opened_in, t.in[0] ? t.in : "none present", m, t.opened_ctl,
		  json_string_value(cf_sub(res, "kallsyms")) ?: "?", json_string_value(cf_sub(res, "kcore")) ?: "?",
		  json_string_value(cf_sub(res, "debugfs")) ?: "?");
}

const struct check_def cf_checks_fs[] = {
	{ .id = "fs.grant_write", .axis = AGSBX_AXIS_CONTRACT, .run = fs_grant_write, .needs_handle = true,
	  .title = "a nonce written into the output root reaches the host",
	  .attacks = "writes a nonce into the output root",
	  .why = "a sandbox that blocks everything is useless; the grant must work",
	  .control = "the host reads the nonce back",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_noop" }, { "tests/cli/collect-negative.sh", "neg_refuses" }, { "tests/test-covA-liars.c", "neg_killed_liar" }, { "tests/test-covA-liars.c", "neg_deny_liar" } } },
	{ .id = "fs.hardlink_alias_denied", .axis = AGSBX_AXIS_FILESYSTEM, .evidence = CHECK_REFUTES, .run = check_fs_hardlink_alias_denied, .needs_handle = true,
	  .title = "a hard link to the canary cannot be made in a writable root (control: can outside)",
	  .attacks = "hard-links a host canary into a writable root and reads through it",
	  .why = "a link made inside survives the sandbox and aliases a host file",
	  .control = "the link can be made outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
	{ .id = "fs.host_read_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_host_read_denied, .needs_handle = true,
	  .title = "a 0644 canary outside the grant is unreadable (control: readable outside)",
	  .attacks = "reads a 0644 canary outside the grant: open(2) directly, via /bin/sh and env, openat2(2), io_uring",
	  .why = "file modes allow it, so only the mechanism can deny it",
	  .control = "the canary is readable outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_allow_liar" }, { "tests/test-covA-liars.c", "neg_silent_refusal" } } },
	{ .id = "fs.host_write_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_host_write_denied, .needs_handle = true,
	  .title = "creating a file outside the grant is denied and absent on the host",
	  .attacks = "creates a file in a writable directory outside the grant",
	  .why = "file modes allow it, so only the mechanism can deny it",
	  .control = "the same create outside succeeds",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/test-covA-liars.c", "neg_allow_liar" } } },
	{ .id = "fs.inherited_fds_contained", .axis = AGSBX_AXIS_FILESYSTEM, .evidence = CHECK_REFUTES, .run = check_fs_inherited_fds_contained, .needs_handle = true,
	  .title = "descriptors, cwd and root inside do not reach the canary by openat(fd, \"../..\") (control: outside they do)",
	  .attacks = "climbs ../ from every inherited descriptor, the cwd and the root to the canary",
	  .why = "runc CVE-2024-21626 (Leaky Vessels): a leaked directory fd reaches the host's /",
	  .control = "the canary is readable outside through cwd or root",
	  .negative = { { "tests/cli/escape-ipc.sh", "neg_overclaim" }, { "tests/cli/escape-ipc.sh", "neg_leaked_fd" } } },
	{ .id = "fs.kernel_interfaces_readonly", .axis = AGSBX_AXIS_FILESYSTEM, .evidence = CHECK_REFUTES, .run = check_fs_kernel_interfaces_readonly, .needs_handle = true,
	  .title = "kernel write interfaces (core_pattern, release_agent, ...) do not open for write; no cgroup mount (control: outside)",
	  .attacks = "opens core_pattern, release_agent and other kernel write interfaces for write (never writing); mounts cgroups in its own namespace",
	  .why = "the runc CVE-2025-31133/52565/52881 and CVE-2022-0492 class",
	  .control = "the same opens outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/cli/collect-negative.sh", "neg_mountns" }, { "tests/cli/collect-negative.sh", "neg_cgroupns" }, { "tests/test-covA-liars.c", "neg_deny_liar" } } },
	{ .id = "fs.no_host_residue", .axis = AGSBX_AXIS_CONTRACT, .run = check_fs_no_host_residue, .needs_handle = true, .exclusive = true,
	  .title = "sandboxed runs leave nothing new in the work dir, grant parent, /tmp or $HOME",
	  .attacks = "inventories the work dir, the grant's parent, /tmp and $HOME before and after sandboxed runs",
	  .why = "bubblewrap leaves mount-point stubs on the host when it binds onto missing paths",
	  .control = "the inventory before the runs",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_residue" } } },
	{ .id = "fs.readonly_grant_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_readonly_grant_denied, .needs_handle = true,
	  .title = "writes into the read-only source root are denied; host content unchanged",
	  .attacks = "overwrites and creates files in the read-only source root",
	  .why = "the reviewed bundle must stay as reviewed",
	  .control = "the host content afterwards",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
	{ .id = "fs.remount_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_remount_denied, .needs_handle = true,
	  .title = "remounting a read-only bind read-write or mounting a filesystem is denied",
	  .attacks = "remounts the source read-write and mounts a tmpfs",
	  .why = "a mount inside can undo every bind",
	  .control = "none: only where a mount stays in the sandbox's own namespace",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" }, { "tests/cli/collect-negative.sh", "neg_mountns" } } },
	{ .id = "fs.symlink_escape_denied", .axis = AGSBX_AXIS_FILESYSTEM, .run = fs_symlink_escape_denied, .needs_handle = true,
	  .title = "a symlink in a writable root does not reach the canary",
	  .attacks = "reads the canary through a symlink planted in a writable root",
	  .why = "path checks that do not follow links are bypassed this way",
	  .control = "the canary is readable outside",
	  .negative = { { "tests/cli/collect-negative.sh", "neg_overclaim" } } },
};
const size_t cf_checks_fs_count = AGSBX_ARRAY_SIZE(cf_checks_fs);
