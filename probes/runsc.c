/* runsc: gVisor's runtime on PATH and its version. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <stdlib.h>

#include "base/cleanup.h"

#define TOOL_TIMEOUT_MS 5000

json_t *agsbx_probe_runsc(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	_cleanup_free_ char *path = agsbx_probes_find_in_path("runsc");
	if (!path) {
		agsbx_fact_put(f, "path", agsbx_fact_absent("not_found_in_path", "$PATH"));
		agsbx_fact_put(f, "version", agsbx_fact_absent("not_found_in_path", "$PATH"));
		agsbx_fact_put(f, "version_line", agsbx_fact_absent("not_found_in_path", "$PATH"));
		return f;
	}
	agsbx_fact_put(f, "path", agsbx_fact_string(path, "$PATH"));
	/* "runsc version 0.0~20221219.0" then "spec: 1.0.2-dev". */
	agsbx_probes_version_facts(f, path, "runsc version ", TOOL_TIMEOUT_MS);
	return f;
}
