/* Private to providers/external/: the declared providers (--adapter,
 * --wrap) and the agsbx-external/1 client. */
#ifndef AGSBX_PROVIDERS_EXTERNAL_INTERNAL_H
#define AGSBX_PROVIDERS_EXTERNAL_INTERNAL_H

#include <pthread.h>

#include "providers/external/external.h"

#define EXT_MAX_LINE (16u << 20)
#define EXT_STDERR_TAIL (64u << 10)
#define EXT_OFFENDING_MAX 512
#define EXT_DEADLINE_MS 10000
#define EXT_ENSURE_DEADLINE_MS 60000
#define EXT_EXECUTE_GRACE_MS 5000

/* Violation reasons (the provider becomes defective). */
#define EXT_R_PROTOCOL "adapter_protocol_error"
#define EXT_R_TIMEOUT "adapter_timeout"
#define EXT_R_EXITED "adapter_exited"
#define EXT_R_LEFTOVER "adapter_leftover"
#define EXT_R_START "adapter_start_failed"

struct ext_adapter;

/* One declared provider. ops comes first: handles reach the instance
 * through h->ops. */
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
	bool wrap_home_real;              /* --config ID.home=real */
	char **wrap_inventory;            /* --config ID.inventory=COMMAND, split; NULL: none */
};

struct ext_instance *ext_instance_of(const struct agsbx_provider_ops *ops);
/* A string that lives as long as the instance (caps point to it). */
const char *ext_intern(struct ext_instance *in, const char *s);

/* ---- the protocol client (adapter.c) ---- */

struct ext_start {
	char *const *argv;
	const struct agsbx_ctx *ctx;
};
int ext_adapter_start(const struct ext_start *st, struct ext_adapter **out, char *err, size_t err_size);
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
int ext_adapter_probe(struct ext_instance *in, const struct agsbx_ctx *ctx, struct agsbx_probe *out);
int ext_adapter_ensure(struct ext_instance *in, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		       struct agsbx_handle **out, struct agsbx_error *fail);
int ext_wrap_probe(struct ext_instance *in, const struct agsbx_ctx *ctx, struct agsbx_probe *out);
int ext_wrap_ensure(struct ext_instance *in, const struct agsbx_ctx *ctx, const struct agsbx_grant *g,
		    struct agsbx_handle **out, struct agsbx_error *fail);
int ext_wrap_configure(struct ext_instance *in, const json_t *config, char *err, size_t err_size);

#endif
