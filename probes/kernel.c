/* kernel: uname(2). */
#include "probes/probes.h"
#include "probes/internal.h"

#include <errno.h>
#include <sys/utsname.h>

json_t *agsbx_probe_kernel_uts(const struct utsname *u, int err)
{
	json_t *f = json_object();
	if (!f)
		return NULL;
	if (!u) {
		const char *names[] = { "sysname", "release", "version", "machine" };
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			agsbx_fact_put(f, names[i], agsbx_fact_errno(err, "uname(2)"));
		return f;
	}
	agsbx_fact_put(f, "sysname", agsbx_fact_string(u->sysname, "uname(2)"));
	agsbx_fact_put(f, "release", agsbx_fact_string(u->release, "uname(2)"));
	agsbx_fact_put(f, "version", agsbx_fact_string(u->version, "uname(2)"));
	agsbx_fact_put(f, "machine", agsbx_fact_string(u->machine, "uname(2)"));
	return f;
}

json_t *agsbx_probe_kernel(void)
{
	struct utsname u;
	if (uname(&u) < 0)
		return agsbx_probe_kernel_uts(NULL, errno);
	return agsbx_probe_kernel_uts(&u, 0);
}
