/* agsbx-evidence-negctl: the real CLI plus the NEGATIVE-CONTROL providers. */
#include "cli/commands.h"
#include "tests/negative/negative.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* neg_leaked_fd's launcher: the descriptor stays open across the exec. */
static int leak_fd_exec(char **argv)
{
	if (open(argv[2], O_PATH | O_DIRECTORY) < 0)
		return 126;
	execvp(argv[4], argv + 4);
	return 127;
}

int main(int argc, char **argv)
{
	if (argc > 4 && strcmp(argv[1], NEG_LEAK_FD_MODE) == 0 && strcmp(argv[3], "--") == 0)
		return leak_fd_exec(argv);
	agsbx_provider_register_extra(&neg_cgroupns);
	agsbx_provider_register_extra(&neg_fail_open);
	agsbx_provider_register_extra(&neg_hang_on_canary);
	agsbx_provider_register_extra(&neg_hang_on_key);
	agsbx_provider_register_extra(&neg_hostile);
	agsbx_provider_register_extra(&neg_hostile_text);
	agsbx_provider_register_extra(&neg_leaked_fd);
	agsbx_provider_register_extra(&neg_leaky);
	agsbx_provider_register_extra(&neg_meta_liar);
	agsbx_provider_register_extra(&neg_mountns);
	agsbx_provider_register_extra(&neg_nnp_caps);
	agsbx_provider_register_extra(&neg_nocap);
	agsbx_provider_register_extra(&neg_noop);
	agsbx_provider_register_extra(&neg_overclaim);
	agsbx_provider_register_extra(&neg_probe_liar);
	agsbx_provider_register_extra(&neg_raw_fails);
	agsbx_provider_register_extra(&neg_refuses);
	agsbx_provider_register_extra(&neg_residue);
	agsbx_provider_register_extra(&neg_runs_after_release);
	agsbx_provider_register_extra(&neg_status_liar);
	agsbx_provider_register_extra(&neg_killed_liar);
	agsbx_provider_register_extra(&neg_timeout_liar);
	agsbx_provider_register_extra(&neg_silent_refusal);
	agsbx_provider_register_extra(&neg_deep_liar);
	agsbx_provider_register_extra(&neg_allow_liar);
	agsbx_provider_register_extra(&neg_deny_liar);
	agsbx_provider_register_extra(&neg_cut_liar);
	agsbx_provider_register_extra(&neg_ensure_refuses);
	agsbx_provider_register_extra(&neg_scripted_liar);
	agsbx_provider_register_extra(&neg_plant_liar);
	agsbx_provider_register_extra(&neg_health_liar);
	agsbx_provider_register_extra(&neg_ensure_once);
	return agsbx_cli_main(argc, argv);
}
