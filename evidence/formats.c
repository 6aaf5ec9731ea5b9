/* The output formats each rendering takes, listed where they are
 * rendered so the CLI's checks and messages cannot drift from them. */
#include "evidence/evidence.h"

#include <string.h>

const char *const *agsbx_render_formats(const char *view)
{
	static const char *const report[] = { "text", "markdown", "junit", "tap", NULL };
	static const char *const diff[] = { "text", "markdown", "json", NULL };
	static const char *const matrix[] = { "markdown", "json", "badge", NULL };
	if (strcmp(view, "report") == 0)
		return report;
	if (strcmp(view, "diff") == 0)
		return diff;
	if (strcmp(view, "matrix") == 0)
		return matrix;
	return NULL;
}
