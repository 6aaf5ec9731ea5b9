#include "cli/commands.h"
#include "base/log.h"

/* placeholder until the command lands */
int agsbx_cmd_verify(int argc, char **argv)
{
	agsbx_error("'verify' is not implemented yet");
	return AGSBX_EXIT_INTERNAL;
}
