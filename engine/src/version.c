#include "ckt/ckt.h"

const char *ckt_version(void) { return CKT_VERSION_STRING; }
