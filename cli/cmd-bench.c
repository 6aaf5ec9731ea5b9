#include "cli/commands.h"
#include "base/log.h"

/* placeholder until the command lands */
int agsbx_cmd_bench(int argc, char **argv)
{
	agsbx_error("'bench' is not implemented yet");
	return AGSBX_EXIT_INTERNAL;
}
