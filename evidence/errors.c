/* evidence.h's boundary speaks one error record (base/error.h); the code
 * behind it fills one-line reasons into buffers (ev_set_err), recorded
 * here as the call returns. The public wrappers sit beside the functions
 * they wrap, so this file calls none of them (no call cycle). */
#include <errno.h>
#include <stdio.h>

#include "base/error.h"
#include "evidence/evidence.h"
#include "evidence/internal.h"

int ev_error(struct agsbx_error *e, int r, const char *msg)
{
	if (r >= 0 || !e)
		return r;
	/* Each call reports its own failure, as the buffers did: what the
	 * record held before is replaced, not kept as a first cause. */
	*e = (struct agsbx_error){ .reason = r == -ENOMEM ? "out_of_memory"
					   : r == -EINVAL || r == -EFBIG || r == -EBADMSG ? "invalid_input"
					   : "system_error" };
	snprintf(e->message, sizeof e->message, "%s", msg);
	return r;
}
