#include "cli/commands.h"
#include "base/log.h"

/* placeholder until the command lands */
int agsbx_cmd_providers(int argc, char **argv)
{
	agsbx_error("'providers' is not implemented yet");
	return AGSBX_EXIT_INTERNAL;
}
