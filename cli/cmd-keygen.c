/* keygen -f FILE [-C COMMENT]: an Ed25519 key pair in OpenSSH format. */
#include "cli/commands.h"

#include "base/cleanup.h"
#include "base/escape.h"
#include "base/log.h"
#include "evidence/evidence.h"

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char agsbx_help_keygen[] =
	"usage: agsbx-evidence keygen -f FILE [-C COMMENT]\n"
	"\n"
	"Writes a new Ed25519 key pair for signing bundles: FILE (private, mode 0600, unencrypted\n"
	"OpenSSH format, usable with ssh-keygen) and FILE.pub. Never overwrites an existing file.\n"
	"The default comment is USER@HOST, as ssh-keygen's. Prints both file names and the key's\n"
	"SHA256 fingerprint with its comment, as ssh-keygen -l shows it.\n"
	"\n"
	"  -f FILE                the private key file (FILE.pub beside it)\n"
	"  -C COMMENT             the key comment\n"
	"  -h, --help             this help; agsbx-evidence --version for the version\n"
	"\n"
	"exit status: 0 written, 2 bad usage or a file exists, 3 I/O error\n"
	"\n"
	"example: agsbx-evidence keygen -f ~/.config/agsbx-evidence/id_ed25519\n";

/* USER@HOST as ssh-keygen comments a new key (NULL when neither is known:
 * the key is then written without a comment). */
static char *default_comment(void)
{
	const struct passwd *pw = getpwuid(geteuid());
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) < 0)
		host[0] = '\0';
	char *s = NULL;
	if (!pw && !host[0])
		return NULL;
	if (asprintf(&s, "%s@%s", pw ? pw->pw_name : "?", host[0] ? host : "?") < 0)
		return NULL;
	return s;
}

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
	_cleanup_free_ char *user_host = comment ? NULL : default_comment();
	char fp[64] = "";
	struct agsbx_error e = { 0 };
	int r = agsbx_keygen(file, comment ? comment : user_host, fp, &e);
	if (r == -EEXIST) {
		agsbx_error("%s", e.message);
		return AGSBX_EXIT_USAGE;
	}
	if (r < 0) {
		agsbx_error("%s", e.message[0] ? e.message : strerror(-r));
		return r == -ENOENT || r == -EACCES || r == -ENOTDIR ? AGSBX_EXIT_USAGE : AGSBX_EXIT_INTERNAL;
	}
	_cleanup_free_ char *shown = agsbx_term_escape(file, 0); /* a file name is text from anywhere */
	_cleanup_free_ char *shown_comment = agsbx_term_escape(comment ? comment : user_host, 0);
	printf("%s\n%s.pub\n%s %s\n", shown ? shown : "?", shown ? shown : "?", fp,
	       shown_comment ? shown_comment : "");
	return AGSBX_EXIT_OK;
}
