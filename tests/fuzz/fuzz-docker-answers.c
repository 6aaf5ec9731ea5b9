/* libFuzzer target: the Docker daemon's small JSON answers as the gVisor
 * provider and the docker probe read them (a daemon is a peer, hostile to
 * us like any). The first byte picks the answer, the second is the HTTP
 * status for those that carry one, the rest is the body (JSON, or not:
 * then the reply is NULL as gv_docker_call gives it):
 *  0: GET /version -> the negotiated prefix (1.30..1.41 only) and the
 *     versions the provider puts in its facts (valid UTF-8 strings);
 *  1: POST /containers/create (and /exec) -> the Id: accepted only on 201
 *     and only as 64 lowercase hex digits (it goes into request paths and
 *     is the needle the host process scan kills by);
 *  2: POST /containers/ID/wait -> an exit status 0..255 that is exactly
 *     the integer StatusCode (a hostile value never reads as success);
 *  3: GET /exec/EID/json -> running, or exited with ExitCode exactly;
 *  4: GET /containers/ID/json -> HostConfig.Runtime, valid UTF-8;
 *  5: GET /info -> the provider's facts: values the bundle can hold;
 *  6: GET /version -> the docker probe's version facts, likewise;
 *  7: GET /containers/json -> each entry's id (64 hex digits, or the
 *     entry is dropped: the id is a DELETE path and a kill needle) and
 *     labels. */
#include "base/util.h"
#include "evidence/evidence.h"
#include "probes/internal.h"
#include "providers/gvisor/docker-api.h"
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const long statuses[] = { 200, 201, 204, 304, 400, 404, 409, 500 };

static void bundlable(const json_t *facts)
{
	size_t len;
	char *c = agsbx_json_canonical(facts, NULL, &len);
	if (!c || agsbx_json_unbundlable(facts, 1, 32))
		abort();
	free(c);
}

static void utf8(const char *s)
{
	json_t *j = json_string(s);
	if (!j)
		abort();
	json_decref(j);
}

static void version(long status, const json_t *v)
{
	struct gv_docker d = { .socket = (char *)"/fuzz/docker.sock" };
	struct agsbx_error err = { 0 };
	if (gv_docker_version_accept(&d, status, v, &err) < 0) {
		if (!agsbx_error_is_set(&err))
			abort(); /* every refusal says why */
		return;
	}
	int minor = atoi(d.prefix + 4);
	if (status != 200 || strncmp(d.prefix, "/v1.", 4) != 0 || minor < GV_API_MIN_MINOR || minor > GV_API_MAX_MINOR)
		abort();
	utf8(d.server_version);
	utf8(d.server_api_version);
	utf8(d.api_version);
}

static void created(long status, const json_t *reply)
{
	char id[65];
	memset(id, 'x', sizeof id);
	if (gv_created_id(status, reply, id) < 0)
		return;
	if (status != 201 || strlen(id) != 64 || strspn(id, "0123456789abcdef") != 64 ||
	    strcmp(id, json_string_value(json_object_get(reply, "Id"))) != 0)
		abort();
}

/* The exit status read is the daemon's integer exactly, in 0..255. */
static void exact_status(int code, const json_t *said)
{
	if (!json_is_integer(said) || code < 0 || code > 255 || json_integer_value(said) != code)
		abort();
}

static void waited(const json_t *w)
{
	int code = -1;
	const char *msg;
	if (gv_wait_answer(w, &code, &msg) < 0)
		return;
	exact_status(code, json_object_get(w, "StatusCode"));
}

static void exec_state(long status, const json_t *j)
{
	int code = -1;
	int r = gv_exec_state_answer(status, j, &code);
	if (r == 1 && (status != 200 || !json_is_true(json_object_get(j, "Running"))))
		abort();
	if (r == 0 && (status != 200 || !json_is_false(json_object_get(j, "Running"))))
		abort();
	if (r == 0)
		exact_status(code, json_object_get(j, "ExitCode"));
}

static void inspected(const json_t *j)
{
	char rt[128];
	gv_inspect_runtime(j, rt, sizeof rt);
	utf8(rt);
}

static void facts_of(const json_t *j, bool probe)
{
	json_t *f = json_object();
	if (probe)
		agsbx_docker_version_facts(f, j, "GET /version on unix:///fuzz");
	else
		gv_info_facts(j, f);
	bundlable(f);
	json_decref(f);
}

static void listed(const json_t *list)
{
	size_t i;
	const json_t *c;
	json_array_foreach(list, i, c) {
		json_t *e = gv_container_entry(c);
		if (!e)
			continue;
		const char *id = json_string_value(json_object_get(e, "id"));
		if (!id || strlen(id) != 64 || strspn(id, "0123456789abcdef") != 64)
			abort();
		bundlable(e);
		json_decref(e);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	long status = statuses[data[1] % (sizeof statuses / sizeof statuses[0])];
	json_t *j = json_loadb((const char *)data + 2, size - 2, JSON_REJECT_DUPLICATES, NULL);
	switch (data[0] % 8) {
	case 0: version(status, j); break;
	case 1: created(status, j); break;
	case 2: waited(j); break;
	case 3: exec_state(status, j); break;
	case 4: inspected(j); break;
	case 5: facts_of(j, false); break;
	case 6: facts_of(j, true); break;
	default: listed(j); break;
	}
	json_decref(j);
	return 0;
}
