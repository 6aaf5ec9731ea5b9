/* keygen -f FILE [-C COMMENT]: an Ed25519 key pair in OpenSSH format. */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/escape.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

const char agsbx_help_keygen[] =
	"usage: agsbx-evidence keygen -f FILE [-C COMMENT]\n"
	"\n"
	"Writes a new Ed25519 key pair for signing bundles: FILE (private, mode 0600, unencrypted\n"
	"OpenSSH format, usable with ssh-keygen) and FILE.pub. Never overwrites an existing file.\n"
	"The default comment is \"agsbx-evidence\".\n"
	"\n"
	"  -f FILE                the private key file (FILE.pub beside it)\n"
	"  -C COMMENT             the key comment\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 written, 2 bad usage or a file exists, 3 I/O error\n"
	"\n"
	"example: agsbx-evidence keygen -f ~/.config/agsbx-evidence/id_ed25519\n";

int agsbx_cmd_keygen(int argc, char **argv)
{
	static const struct option lo[] = { { 0 } };
	const char *file = NULL, *comment = NULL;
	struct agsbx_args a = { .cmd = "keygen", .argc = argc, .argv = argv, .short_only = "f:C:" };
	int c;
	while ((c = agsbx_args_next(&a, lo)) > 0)
		*(c == 'f' ? &file : &comment) = a.value;
	if (c < 0 || agsbx_args_operands(&a, 0, 0, NULL, NULL))
		return AGSBX_EXIT_USAGE;
	if (!file || !*file)
		return agsbx_usage_error("keygen", "-f FILE is required");
	if (comment && strpbrk(comment, "\r\n"))
		return agsbx_usage_error("keygen", "the comment must be one line");
	char err[512] = "";
	int r = agsbx_keygen(file, comment, err, sizeof err);
	if (r == -EEXIST) {
		agsbx_error("%s", err);
		return AGSBX_EXIT_USAGE;
	}
	if (r < 0) {
		agsbx_error("%s", err[0] ? err : strerror(-r));
		return r == -ENOENT || r == -EACCES || r == -ENOTDIR ? AGSBX_EXIT_USAGE : AGSBX_EXIT_INTERNAL;
	}
	_cleanup_free_ char *shown = agsbx_term_escape(file, 0); /* a file name is text from anywhere */
	printf("%s\n%s.pub\n", shown ? shown : "?", shown ? shown : "?");
	return AGSBX_EXIT_OK;
}
