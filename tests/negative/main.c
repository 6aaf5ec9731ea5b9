/* agsbx-evidence-negctl: the real CLI plus the NEGATIVE-CONTROL providers. */
#include "cli/commands.h"
#include "tests/negative/negative.h"

int main(int argc, char **argv)
{
	agsbx_provider_register_extra(&neg_cgroupns);
	agsbx_provider_register_extra(&neg_fail_open);
	agsbx_provider_register_extra(&neg_hang_on_canary);
	agsbx_provider_register_extra(&neg_hostile);
	agsbx_provider_register_extra(&neg_hostile_text);
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
	return agsbx_cli_main(argc, argv);
}
