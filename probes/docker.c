/* docker: the Docker Engine API over its unix socket. GET /version and
 * GET /info with short timeouts and bounded answers. Not reaching a
 * Docker daemon (no socket, refused, no permission, something else
 * answering) is a fact, "reachable": false with the reason, never an
 * error. Only unix:// endpoints are spoken to; anything else is recorded
 * as unsupported without a connection attempt. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/dockerhost.h"
#include "base/error.h"
#include "base/http.h"
#include "base/util.h"

#define DEFAULT_TIMEOUT_MS 2000
#define MAX_RESPONSE (1u << 20)

static const char *const version_facts[] = { "version", "api_version", "min_api_version" };
static const char *const info_facts[] = { "runtimes", "default_runtime", "security_options", "cgroup_version",
					  "kernel_version", "server_version" };

int agsbx_docker_socket_path(const char *docker_host, char **path, struct agsbx_error *err)
{
	if (!docker_host || !*docker_host)
		docker_host = getenv("DOCKER_HOST");
	return agsbx_dockerhost_socket(docker_host, path, err);
}

/* Failures below: the reason and message shared by every fact that
 * depends on reaching the daemon. */

static void fail_all(json_t *f, const char *const *names, size_t n, const struct agsbx_error *why, const char *source)
{
	for (size_t i = 0; i < n; i++)
		agsbx_fact_put(f, names[i], agsbx_fact_detail(agsbx_fact_absent(why->reason, source), why->message));
}

/* Cheap, precise reasons before curl's generic "couldn't connect". */
static int precheck_socket(const char *path, struct agsbx_error *why)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		agsbx_error_set(why, agsbx_errno_name(errno), NULL);
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		agsbx_error_set(why, "ENOTSOCK", NULL);
		return -1;
	}
	/* connect(2) on a unix socket needs write permission on it. */
	if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0) {
		agsbx_error_set(why, agsbx_errno_name(errno), NULL);
		return -1;
	}
	return 0;
}

/* GET endpoint; the parsed JSON object (new reference) or NULL with why. */
static json_t *get_json(const char *sock, const char *endpoint, long timeout_ms, struct agsbx_error *why)
{
	char url[128];
	snprintf(url, sizeof url, "http://docker%s", endpoint);
	struct agsbx_http_request req = {
		.unix_socket = sock,
		.url = url,
		.timeout_ms = timeout_ms,
		.connect_timeout_ms = timeout_ms,
		.max_response = MAX_RESPONSE,
	};
	struct agsbx_http_response resp;
	int r = agsbx_http(&req, &resp);
	if (r < 0) {
		agsbx_error_set(why, r == -EFBIG ? "response_too_large" : agsbx_errno_name(r), "%s", resp.error);
		agsbx_http_response_clear(&resp);
		return NULL;
	}
	json_error_t jerr;
	json_t *j = json_loadb(resp.body, resp.len, JSON_REJECT_DUPLICATES, &jerr);
	if (resp.status != 200) {
		const char *msg = json_string_value(json_object_get(j, "message"));
		agsbx_error_set(why, "http_error", "HTTP %ld%s%.256s", resp.status, msg ? ": " : "", msg ? msg : "");
		json_decref(j);
		j = NULL;
	} else if (!j) {
		agsbx_error_set(why, "not_json", "%.200s", jerr.text);
	} else if (!json_is_object(j)) {
		agsbx_error_set(why, "not_docker_api", "%s is not a JSON object", endpoint);
		json_decref(j);
		j = NULL;
	}
	agsbx_http_response_clear(&resp);
	return j;
}

/* The strings of a daemon-reported array, sanitised (a daemon is not
 * trusted to print only text); other members are left out. */
static json_t *sanitized_strings(const json_t *arr)
{
	json_t *a = json_array();
	size_t i;
	const json_t *e;
	json_array_foreach(arr, i, e) {
		const char *s = json_string_value(e);
		if (a && s)
			json_array_append_new(a, agsbx_json_string_sanitized(s, strlen(s)));
	}
	return a;
}

static json_t *string_member(const json_t *o, const char *key, const char *source)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? agsbx_fact_string(s, source) : agsbx_fact_absent("not_reported", source);
}

/* Runtimes as {"name": {"path": "...", "runtimeArgs": [...]}}: only the
 * members that say what would run, sanitised. */
static json_t *runtimes_fact(const json_t *info, const char *source)
{
	const json_t *rt = json_object_get(info, "Runtimes");
	if (!json_is_object(rt))
		return agsbx_fact_absent("not_reported", source);
	json_t *out = json_object();
	const char *name;
	const json_t *v;
	json_object_foreach((json_t *)rt, name, v) {
		json_t *e = json_object();
		if (!out || !e) {
			json_decref(e);
			break;
		}
		const char *p = json_string_value(json_object_get(v, "path"));
		if (p)
			json_object_set_new(e, "path", agsbx_json_string_sanitized(p, strlen(p)));
		const json_t *args = json_object_get(v, "runtimeArgs");
		if (json_is_array(args))
			json_object_set_new(e, "runtimeArgs", sanitized_strings(args));
		/* jansson already checked the key is UTF-8. */
		json_object_set_new(out, name, e);
	}
	return agsbx_fact_value(out, source);
}

static json_t *security_options_fact(const json_t *info, const char *source)
{
	const json_t *so = json_object_get(info, "SecurityOptions");
	if (!json_is_array(so))
		return agsbx_fact_absent("not_reported", source);
	return agsbx_fact_value(sanitized_strings(so), source);
}

void agsbx_docker_info_facts(json_t *f, const json_t *info, const char *source)
{
	agsbx_fact_put(f, "runtimes", runtimes_fact(info, source));
	agsbx_fact_put(f, "default_runtime", string_member(info, "DefaultRuntime", source));
	agsbx_fact_put(f, "security_options", security_options_fact(info, source));
	agsbx_fact_put(f, "cgroup_version", string_member(info, "CgroupVersion", source));
	agsbx_fact_put(f, "kernel_version", string_member(info, "KernelVersion", source));
	agsbx_fact_put(f, "server_version", string_member(info, "ServerVersion", source));
}

bool agsbx_docker_version_facts(json_t *f, const json_t *ver, const char *source)
{
	if (!json_is_string(json_object_get(ver, "Version")) || !json_is_string(json_object_get(ver, "ApiVersion")))
		return false;
	agsbx_fact_put(f, "version", string_member(ver, "Version", source));
	agsbx_fact_put(f, "api_version", string_member(ver, "ApiVersion", source));
	agsbx_fact_put(f, "min_api_version", string_member(ver, "MinAPIVersion", source));
	return true;
}

static void put_info(json_t *f, const char *sock, long timeout_ms)
{
	char source[160];
	snprintf(source, sizeof source, "GET /info on unix://%s", sock);
	struct agsbx_error why = { 0 };
	_cleanup_json_ json_t *info = get_json(sock, "/info", timeout_ms, &why);
	if (!info) {
		fail_all(f, info_facts, AGSBX_ARRAY_SIZE(info_facts), &why, source);
		return;
	}
	agsbx_docker_info_facts(f, info, source);
}

/* The endpoint and where it came from. */
static const char *endpoint_of(const struct agsbx_probe_opts *opts, const char **source)
{
	if (opts && opts->docker_host && *opts->docker_host) {
		*source = "option:docker_host";
		return opts->docker_host;
	}
	const char *env = getenv("DOCKER_HOST");
	if (env && *env) {
		*source = "environ:DOCKER_HOST";
		return env;
	}
	*source = "default";
	return "unix://" AGSBX_DOCKER_DEFAULT_SOCKET;
}

static void unreachable(json_t *f, const struct agsbx_error *why, const char *source)
{
	agsbx_fact_put(f, "reachable", agsbx_fact_detail(agsbx_fact_reason(agsbx_fact_bool(false, source), why->reason),
							  why->message));
	fail_all(f, version_facts, AGSBX_ARRAY_SIZE(version_facts), why, source);
	fail_all(f, info_facts, AGSBX_ARRAY_SIZE(info_facts), why, source);
}

json_t *agsbx_probe_docker(const struct agsbx_probe_opts *opts)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	long timeout_ms = opts && opts->docker_timeout_ms > 0 ? opts->docker_timeout_ms : DEFAULT_TIMEOUT_MS;
	const char *ep_source = NULL;
	const char *endpoint = endpoint_of(opts, &ep_source);
	agsbx_fact_put(f, "endpoint", agsbx_fact_string(endpoint, ep_source));

	struct agsbx_error why = { 0 };
	_cleanup_free_ char *sock = NULL;
	if (agsbx_docker_socket_path(endpoint, &sock, &why) < 0) {
		agsbx_error_set(&why, "invalid_docker_host", NULL);   /* out of memory: no reason yet */
		agsbx_fact_put(f, "socket", agsbx_fact_detail(agsbx_fact_absent(why.reason, ep_source), why.message));
		unreachable(f, &why, ep_source);
		return f;
	}
	agsbx_fact_put(f, "socket", agsbx_fact_string(sock, ep_source));
	char source[160];
	snprintf(source, sizeof source, "GET /version on unix://%s", sock);
	if (precheck_socket(sock, &why) < 0) {
		unreachable(f, &why, source);
		return f;
	}
	_cleanup_json_ json_t *ver = get_json(sock, "/version", timeout_ms, &why);
	/* Anything can listen on a socket: it is Docker only if /version
	 * says so. */
	bool docker = ver && agsbx_docker_version_facts(f, ver, source);
	if (ver && !docker)
		agsbx_error_set(&why, "not_docker_api", "/version has no Version/ApiVersion strings");
	if (!docker) {
		unreachable(f, &why, source);
		return f;
	}
	agsbx_fact_put(f, "reachable", agsbx_fact_bool(true, source));
	put_info(f, sock, timeout_ms);
	return f;
}
