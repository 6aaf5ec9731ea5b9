/* userns: may unprivileged users create user namespaces? The Debian /
 * Ubuntu knob (absent on mainline kernels) and the per-namespace limit. */
#include "probes/probes.h"
#include "probes/internal.h"

json_t *agsbx_probe_userns(void)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	agsbx_fact_put(f, "unprivileged_userns_clone",
		       agsbx_fact_file_int("/proc/sys/kernel/unprivileged_userns_clone"));
	agsbx_fact_put(f, "max_user_namespaces", agsbx_fact_file_int("/proc/sys/user/max_user_namespaces"));
	return f;
}
