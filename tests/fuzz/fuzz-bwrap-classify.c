/* libFuzzer target: the bubblewrap failure classifier (its stderr, any
 * bytes, NULs included). Property: the class is always one of the closed
 * set, with a reason. */
#include "providers/bubblewrap/bwrap.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *cls = agsbx_bwrap_classify((const char *)data, size);
	bool known = false;
	for (size_t i = 0; cls && agsbx_bwrap_classes[i]; i++)
		known |= strcmp(cls, agsbx_bwrap_classes[i]) == 0;
	if (!known || !agsbx_bwrap_class_reason(cls))
		abort();
	(void)agsbx_bwrap_class_is_namespace(cls);
	return 0;
}
