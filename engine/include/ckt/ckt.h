/* ckt — a tiling engine for GPU kernel authors. The umbrella header of the C API. */
#ifndef CKT_CKT_H
#define CKT_CKT_H

#include "ckt/error.h"
#include "ckt/checked.h"
#include "ckt/context.h"
#include "ckt/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_VERSION_MAJOR 0
#define CKT_VERSION_MINOR 1
#define CKT_VERSION_PATCH 0
#define CKT_VERSION_STRING "0.1.0"

const char *ckt_version(void);

#ifdef __cplusplus
}
#endif
#endif
