#include "cli/commands.h"
#include "base/log.h"

/* placeholder until the command lands */
int agsbx_cmd_probe(int argc, char **argv)
{
	agsbx_error("'probe' is not implemented yet");
	return AGSBX_EXIT_INTERNAL;
}
