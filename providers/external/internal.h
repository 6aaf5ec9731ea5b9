/* Private to providers/external/: the declared providers (--adapter,
 * --wrap) and the agsbx-external/1 client. */
#ifndef AGSBX_PROVIDERS_EXTERNAL_INTERNAL_H
#define AGSBX_PROVIDERS_EXTERNAL_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include "providers/external/external.h"

#define EXT_MAX_LINE (16u << 20)
#define EXT_STDERR_TAIL (64u << 10)
#define EXT_OFFENDING_MAX 512
#define EXT_DEADLINE_MS 10000
#define EXT_ENSURE_DEADLINE_MS 60000
#define EXT_EXECUTE_GRACE_MS 5000
/* What an adapter's JSON may be (confine.c; docs/external-protocol.md). */
#define EXT_MAX_DEPTH 32                  /* arrays/objects in one line, its own object included */
#define EXT_MAX_DEPTH_STR "32"
#define EXT_MAX_VALUES 262144            /* values in one line (before it is parsed) */
#define EXT_MAX_VALUES_STR "262144"
#define EXT_PIECE_MAX (64u << 10)         /* one execute's meta + inferred, one probe's facts, hello */
#define EXT_NAME_MAX 128                  /* provider name/version, mechanism, safety_class, handle */
#define EXT_NAME_MAX_STR "128"
#define EXT_TEXT_MAX 4096                 /* probe detail and hint */
#define EXT_SUPPLIED_MAX (16u << 20)      /* all adapters' JSON in one bundle, split among the declared */
/* Where it sits in the bundle: providers[].checks[].observations[].meta.adapter.{meta,inferred} */
#define EXT_META_DEPTH 9
#define EXT_FACTS_DEPTH 5                 /* providers[].probe.facts (and a check's facts) */
#define EXT_HELLO_DEPTH 4                 /* providers[].declared.hello */

/* Violation reasons (the provider becomes defective). */
#define EXT_R_PROTOCOL "adapter_protocol_error"
#define EXT_R_TIMEOUT "adapter_timeout"
#define EXT_R_EXITED "adapter_exited"
#define EXT_R_LEFTOVER "adapter_leftover"
#define EXT_R_START "adapter_start_failed"

struct ext_adapter;

/* One declared provider: its ops are a copy of its kind's template, and
 * every op reaches the instance from them (self, or h->ops). */
struct ext_instance {
	struct agsbx_provider_ops ops;
	bool wrap;
	char id[33];
	char *decl;                       /* COMMAND / TEMPLATE as given */
	char **argv;                      /* split (and relative paths made absolute) */
	size_t argc;
	pthread_mutex_t lock;
	struct ext_adapter *ad;           /* started by the first probe/ensure */
	bool started;                     /* once per provider run */
	char start_error[512];            /* why the adapter could not be started */
	json_t *hello;                    /* the hello response */
	json_t *last_probe;               /* the last probe response */
	struct ext_handle **handles;      /* freed when the run is over */
	size_t nhandles;
	const char **reasons;             /* closed set: adapter's + the harness's */
	const char **config_keys;
	struct agsbx_reason_cond *conds;  /* from hello's optional reason_conditions */
	char **interned;                  /* strings the caps point to */
	size_t ninterned;
	struct agsbx_caps wrap_claims;    /* --config ID.claims */
	json_t *wrap_claims_json;
	size_t supplied;                  /* adapter-supplied bytes kept (confine.c) */
	unsigned long supplied_truncated; /* pieces replaced by a truncation marker */
	bool wrap_home_real;              /* --config ID.home=real */
	char **wrap_inventory;            /* --config ID.inventory=COMMAND, split; NULL: none */
};

/* The instance of a declared provider's ops (self, or h->ops). */
static inline struct ext_instance *ext_instance_of(const struct agsbx_provider_ops *ops)
{
	return (struct ext_instance *)((char *)ops - offsetof(struct ext_instance, ops));
}

/* ---- the instance table (instances.c, a leaf) ---- */

/* Appends in to the table: 0, or -ENOSPC past AGSBX_EXTERNAL_MAX. */
int ext_instance_add(struct ext_instance *in);
/* A string that lives as long as the instance (caps point to it). */
const char *ext_intern(struct ext_instance *in, const char *s);

/* ---- confining the adapter's JSON (confine.c) ---- */

/* NULL when j (depth levels of arrays/objects already open around it,
 * counting j if it is one) fits the bundle: integers within +-2^53, no
 * reals, at most EXT_MAX_DEPTH levels; else what is wrong. */
const char *ext_json_unconfined(const json_t *j, int depth);
/* The same depth limit, and at most EXT_MAX_VALUES values, on a raw line
 * before it is parsed (NULL: fine, or not JSON at all). */
const char *ext_line_unconfined(const char *line, size_t len);
/* An upper bound of the bytes j takes in the bundle as written at depth
 * (indented) or in the worker report (ASCII-escaped); counting stops
 * soon after stop. */
size_t ext_json_written_size(const json_t *j, int depth, size_t stop);
/* This provider's share of EXT_SUPPLIED_MAX. */
size_t ext_supplied_share(void);
/* v as it may go into the bundle (new ref): v itself, charged to the
 * instance's share, when it is within cap and the share; else a marker
 * {truncated, why, limit_bytes} and *truncated. */
json_t *ext_supplied(struct ext_instance *in, const json_t *v, int depth, size_t cap, bool *truncated);

/* ---- the protocol client (adapter.c) ---- */

struct ext_start {
	char *const *argv;
	const struct agsbx_ctx *ctx;
};
/* 0, or -errno with the reason EXT_R_START and why in fail. */
int ext_adapter_start(const struct ext_start *st, struct ext_adapter **out, struct agsbx_error *fail);
/* The reasons an ok:false response may carry (NULL: generic ones only). */
void ext_adapter_set_reasons(struct ext_adapter *a, const char *const *reasons);
/* Sends {id, op, ...fields} (fields stolen, may be NULL) and waits for the
 * response until deadline_ms. 0 with *resp (new ref, ok true or false), or
 * < 0 when the adapter is (now) broken, with fail set to the violation.
 * With cancel_fd >= 0 and exec_id: when cancel_fd becomes readable, a
 * cancel request for exec_id is sent once (and its answer awaited). */
int ext_call(struct ext_adapter *a, const char *op, json_t *fields, int64_t deadline_ms, int cancel_fd,
	     const char *exec_id, json_t **resp, struct agsbx_error *fail);
/* Records a violation found by the caller (a response field missing or
 * mistyped): the adapter is broken from now on and its tree is killed. */
void ext_violation(struct ext_adapter *a, const char *reason, const json_t *offending, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool ext_broken(struct ext_adapter *a, struct agsbx_error *fail);
/* shutdown, the wait for exit, the kill of whatever is left; returns the
 * adapter record for the bundle (new ref) and sets defect on a violation
 * or leftovers. Frees a. */
json_t *ext_adapter_finish(struct ext_adapter *a, struct agsbx_error *defect);

struct ext_handle {
	char *handle;
	unsigned long execs;
};
/* An ok:false response as the failure of op (-EPERM). */
int ext_refusal(struct ext_instance *in, const json_t *r, const char *op, struct agsbx_error *fail);

/* ---- kinds ---- */
extern const struct agsbx_provider_ops ext_adapter_ops_template;
extern const struct agsbx_provider_ops ext_wrap_ops_template;
/* The adapter's probe and ensure (session.c), the template's ops. */
int ext_adapter_probe(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, struct agsbx_probe *out);
int ext_adapter_ensure(const struct agsbx_provider_ops *self, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		       struct agsbx_handle **out, struct agsbx_error *fail);

#endif
