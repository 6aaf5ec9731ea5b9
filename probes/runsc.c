/* runsc: gVisor's runtime on PATH and its version. */
#include "probes/probes.h"
#include "probes/internal.h"

#include <stdlib.h>

#include "base/cleanup.h"
#include "base/defaults.h"


json_t *agsbx_probe_runsc(void)
{
	static const char *const facts[] = { "path", "version", "version_line", NULL };
	_cleanup_free_ char *path = NULL;
	json_t *f = agsbx_probes_tool_family("runsc", facts, &path);
	/* "runsc version 0.0~20221219.0" then "spec: 1.0.2-dev". */
	if (path)
		agsbx_probes_version_facts(f, path, "runsc version ", AGSBX_PROBE_TIMEOUT_MS);
	return f;
}
