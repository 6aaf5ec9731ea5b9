/* evidence: filled by the evidence module */
#include "base/util.h"
int agsbx_evidence_placeholder(void);
int agsbx_evidence_placeholder(void) { return 0; }
