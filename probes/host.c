/* The host object: every family, listed once, in the order people read
 * them. Adding a family is one row here, one file, and its facts in
 * schemas/host-probe.schema.json. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <string.h>

static json_t *kernel(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_kernel(); }
static json_t *os(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_os(); }
static json_t *privilege(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_privilege(); }
static json_t *container(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_container(); }
static json_t *userns(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_userns(); }
static json_t *apparmor(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_apparmor(); }
static json_t *landlock(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_landlock(); }
static json_t *cgroup(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_cgroup(); }
static json_t *bubblewrap(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_bubblewrap(); }
static json_t *runsc(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_runsc(); }
static json_t *macos(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_macos(); }
static json_t *hardening(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_hardening(); }
static json_t *runtimes(const struct agsbx_probe_opts *o) { (void)o; return agsbx_probe_runtimes(); }

static const struct agsbx_probe_family families[] = {
	{ "kernel", kernel, NULL },
	{ "os", os, NULL },
	{ "privilege", privilege, NULL },
	{ "container", container, NULL },
	{ "userns", userns, NULL },
	{ "apparmor", apparmor, NULL },
	{ "landlock", landlock, NULL },
	{ "cgroup", cgroup, NULL },
	{ "bubblewrap", bubblewrap, NULL },
	{ "runsc", runsc, NULL },
	{ "docker", agsbx_probe_docker, NULL },
	{ "macos", macos, NULL },
	{ "hardening", hardening, NULL },
	{ "runtimes", runtimes, NULL },
	{ "advisories", NULL, agsbx_probe_advisories },
};

const struct agsbx_probe_family *agsbx_probe_families(size_t *n)
{
	*n = sizeof families / sizeof families[0];
	return families;
}

json_t *agsbx_probe_host(const struct agsbx_probe_opts *opts)
{
	json_t *host = json_object();
	if (!host || json_object_set_new(host, "schema", json_string(AGSBX_HOST_PROBE_SCHEMA)) < 0) {
		json_decref(host);
		return NULL;
	}
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
		json_t *fam = families[i].derive ? families[i].derive(host) : families[i].probe(opts);
		if (!fam || json_object_set_new(host, families[i].name, fam) < 0) {
			json_decref(host);
			return NULL;
		}
	}
	return host;
}
