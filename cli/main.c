#include "cli/commands.h"

int main(int argc, char **argv)
{
	return agsbx_cli_main(argc, argv);
}
