/* macos: sw_vers and the Seatbelt front end /usr/bin/sandbox-exec. On
 * other systems every fact is absent with reason "not_macos". */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/defaults.h"

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"
#define SW_VERS "/usr/bin/sw_vers"

static const struct {
	const char *flag;
	const char *fact;
} sw_vers_keys[] = {
	{ "-productName", "product_name" },
	{ "-productVersion", "product_version" },
	{ "-buildVersion", "build_version" },
};

#ifdef __APPLE__
static json_t *sw_vers_fact(const char *flag)
{
	const char *argv[] = { SW_VERS, flag, NULL };
	char source[64];
	snprintf(source, sizeof source, SW_VERS " %s", flag);
	_cleanup_free_ char *out = NULL, *detail = NULL;
	const char *reason = NULL;
	if (agsbx_probes_run_tool(argv, AGSBX_PROBE_TIMEOUT_MS, &out, &reason, &detail) < 0)
		return agsbx_fact_detail(agsbx_fact_absent(reason, source), detail);
	out[strcspn(out, "\n")] = '\0';
	return agsbx_fact_string(out, source);
}

json_t *agsbx_probe_macos(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	for (size_t i = 0; i < sizeof sw_vers_keys / sizeof sw_vers_keys[0]; i++)
		agsbx_fact_put(f, sw_vers_keys[i].fact, sw_vers_fact(sw_vers_keys[i].flag));
	if (access(SANDBOX_EXEC, X_OK) == 0)
		agsbx_fact_put(f, "sandbox_exec", agsbx_fact_string(SANDBOX_EXEC, SANDBOX_EXEC));
	else
		agsbx_fact_put(f, "sandbox_exec", agsbx_fact_errno(errno, SANDBOX_EXEC));
	return f;
}
#else
json_t *agsbx_probe_macos(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	for (size_t i = 0; i < sizeof sw_vers_keys / sizeof sw_vers_keys[0]; i++)
		agsbx_fact_put(f, sw_vers_keys[i].fact, agsbx_fact_absent("not_macos", SW_VERS));
	agsbx_fact_put(f, "sandbox_exec", agsbx_fact_absent("not_macos", SANDBOX_EXEC));
	return f;
}
#endif
