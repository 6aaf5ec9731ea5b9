#include "providers/provider.h"
int agsbx_conformance_placeholder(void);
int agsbx_conformance_placeholder(void) { return 0; }
