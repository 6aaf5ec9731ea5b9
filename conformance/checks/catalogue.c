/* The catalogue: every topic's rows (conformance/checks/TOPIC.c) in one
 * array sorted by id, which the matrix runs in order and a bundle lists
 * its checks in; and the catalogue as data for `agsbx-evidence checks`. */
#include "conformance/checks/attack.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

struct topic {
	const struct check_def *rows;
	const size_t *count;
};

static const struct topic topics[] = {
	{ cf_checks_contract, &cf_checks_contract_count },
	{ cf_checks_env, &cf_checks_env_count },
	{ cf_checks_fs, &cf_checks_fs_count },
	{ cf_checks_ipc, &cf_checks_ipc_count },
	{ cf_checks_lifecycle, &cf_checks_lifecycle_count },
	{ cf_checks_net, &cf_checks_net_count },
	{ cf_checks_priv, &cf_checks_priv_count },
	{ cf_checks_proc, &cf_checks_proc_count },
	{ cf_checks_resources, &cf_checks_resources_count },
	{ cf_checks_secrets, &cf_checks_secrets_count },
	{ cf_checks_syscalls, &cf_checks_syscalls_count },
};

/* Room for every row; a catalogue that outgrows it is cut (and the unit
 * test that counts the topics' rows fails). */
#define CATALOGUE_MAX 128

static struct check_def catalogue[CATALOGUE_MAX];
const struct check_def *const cf_checks = catalogue;
size_t cf_checks_count;

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct check_def *)a)->id, ((const struct check_def *)b)->id);
}

/* Before main (and before any thread): the rows are constant data in
 * their topic files, only their order is computed. */
__attribute__((constructor)) static void catalogue_assemble(void)
{
	size_t n = 0;
	for (size_t t = 0; t < AGSBX_ARRAY_SIZE(topics); t++)
		for (size_t i = 0; i < *topics[t].count && n < CATALOGUE_MAX; i++)
			catalogue[n++] = topics[t].rows[i];
	qsort(catalogue, n, sizeof catalogue[0], by_id);
	cf_checks_count = n;
}

static const char *const evidence_names[] = { [CHECK_BACKS] = "backs", [CHECK_REFUTES] = "refutes" };
static const char *const phase_names[] = { [CHECK_PHASE_RUN] = "run", [CHECK_PHASE_JUDGE] = "judge" };

static const char *exclusive_name(unsigned char e)
{
	return e == AGSBX_EXCLUSIVE_ORPHANS ? "orphans" : e ? "always" : "never";
}

static json_t *negatives_json(const struct check_def *d)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < CHECK_NEGATIVES_MAX && d->negative[i].test; i++)
		json_array_append_new(a, json_pack("{s:s, s:s}", "test", d->negative[i].test, "provider",
						   d->negative[i].provider));
	return a;
}

static json_t *row_json(const struct check_def *d, bool declared)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s*, s:s*, s:s*, s:o, s:b, s:s, s:b}", "id", d->id, "axis",
			 agsbx_axes[d->axis].name, "evidence", evidence_names[d->evidence], "phase", phase_names[d->phase],
			 "title", d->title, "attacks", d->attacks, "why", d->why, "control", d->control,
			 "negative_control", negatives_json(d), "needs_handle", d->needs_handle, "exclusive",
			 exclusive_name(d->exclusive), "declared_only", declared);
}

static int by_id_ptr(const void *a, const void *b)
{
	return by_id(*(const struct check_def *const *)a, *(const struct check_def *const *)b);
}

json_t *agsbx_conformance_catalogue(void)
{
	size_t n = cf_checks_count + cf_checks_declared_count;
	_cleanup_free_ const struct check_def **all = calloc(n, sizeof *all);
	json_t *list = json_array();
	if (!all || !list)
		return json_decref(list), NULL;
	for (size_t i = 0; i < n; i++)
		all[i] = i < cf_checks_count ? &cf_checks[i] : &cf_checks_declared[i - cf_checks_count];
	qsort(all, n, sizeof *all, by_id_ptr);
	for (size_t i = 0; i < n; i++) {
		/* the matrix adds a declared provider's checks itself: no run function */
		if (json_array_append_new(list, row_json(all[i], !all[i]->run)) < 0)
			return json_decref(list), NULL;
	}
	return list;
}
