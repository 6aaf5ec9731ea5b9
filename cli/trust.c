/* The trust-anchor options shared by verify, diff and matrix. */
#include "cli/commands.h"
#include "evidence/evidence.h"

#include <string.h>

const char *agsbx_opt_value(int argc, char **argv, int *i, const char *opt, bool *missing)
{
	size_t n = strlen(opt);
	if (strncmp(argv[*i], opt, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

bool agsbx_trust_option(int argc, char **argv, int *i, struct agsbx_verify_opts *o, bool *missing)
{
	const char *v;
	if (strcmp(argv[*i], "--allow-insecure-keys-url") == 0) {
		o->allow_insecure_url = true;
		return true;
	}
	if ((v = agsbx_opt_value(argc, argv, i, "--key", missing)))
		o->key_path = v;
	else if ((v = agsbx_opt_value(argc, argv, i, "--allowed-signers", missing)))
		o->allowed_signers = v;
	else if ((v = agsbx_opt_value(argc, argv, i, "--identity", missing)))
		o->identity = v;
	else if ((v = agsbx_opt_value(argc, argv, i, "--keys-url", missing)))
		o->keys_url = v;
	return v != NULL;
}
