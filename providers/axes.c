/* The capability axes table (provider.h): the order is the bundle's
 * (overclaim/underclaim/inconclusive lists follow it). */
#include "providers/provider.h"

#include <stddef.h>
#include <string.h>

#define FLAG(member) { #member, AGSBX_AXIS_KIND_FLAG, offsetof(struct agsbx_caps, member), 0 }

const struct agsbx_axis_info agsbx_axes[AGSBX_AXIS_COUNT] = {
	[AGSBX_AXIS_CONTRACT] = { "contract", AGSBX_AXIS_KIND_CONTRACT, 0, 0 },
	[AGSBX_AXIS_PROCESS] = FLAG(process_contained),
	[AGSBX_AXIS_FILESYSTEM] = FLAG(host_filesystem_restricted),
	[AGSBX_AXIS_PRIVILEGE] = FLAG(privilege_escalation_blocked),
	[AGSBX_AXIS_SYSCALLS] = FLAG(syscalls_restricted),
	[AGSBX_AXIS_ENVIRONMENT] = FLAG(environment_scrubbed),
	[AGSBX_AXIS_NET_NAMESPACE] = { "network", AGSBX_AXIS_KIND_NETWORK, 0, 2 },
	[AGSBX_AXIS_NET_EGRESS] = { "network", AGSBX_AXIS_KIND_NETWORK, 0, 1 },
	[AGSBX_AXIS_RESOURCES] = FLAG(resources_bounded),
};

int agsbx_net_rank(const char *network)
{
	if (network && strcmp(network, AGSBX_NET_ISOLATED) == 0)
		return 2;
	if (network && strcmp(network, AGSBX_NET_TCP_RESTRICTED) == 0)
		return 1;
	return 0;
}

const char *agsbx_net_of_rank(int rank)
{
	return rank >= 2 ? AGSBX_NET_ISOLATED : rank == 1 ? AGSBX_NET_TCP_RESTRICTED : AGSBX_NET_INHERITED;
}

bool *agsbx_axis_flag(enum agsbx_axis a, struct agsbx_caps *caps)
{
	if (a < 0 || a >= AGSBX_AXIS_COUNT || agsbx_axes[a].kind != AGSBX_AXIS_KIND_FLAG)
		return NULL;
	return (bool *)((char *)caps + agsbx_axes[a].flag_offset);
}

bool agsbx_axis_claimed(enum agsbx_axis a, const struct agsbx_caps *caps)
{
	if (a < 0 || a >= AGSBX_AXIS_COUNT)
		return false;
	switch (agsbx_axes[a].kind) {
	case AGSBX_AXIS_KIND_CONTRACT:
		return true;
	case AGSBX_AXIS_KIND_FLAG:
		return *(const bool *)((const char *)caps + agsbx_axes[a].flag_offset);
	case AGSBX_AXIS_KIND_NETWORK:
		return agsbx_net_rank(caps->network) >= agsbx_axes[a].net_rank;
	}
	return false;
}
