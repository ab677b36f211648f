/* ckt — a tiling engine for GPU kernel authors. The umbrella header of the C API: it includes
 * every public header (engine/include/ckt); build details live in engine/src. */
#ifndef CKT_CKT_H
#define CKT_CKT_H

#include "ckt/autotune.h"
#include "ckt/cache.h"
#include "ckt/context.h"
#include "ckt/distribution.h"
#include "ckt/dtype.h"
#include "ckt/emit.h"
#include "ckt/error.h"
#include "ckt/executable.h"
#include "ckt/expr.h"
#include "ckt/fragment.h"
#include "ckt/gemm.h"
#include "ckt/jit.h"
#include "ckt/kernel_ir.h"
#include "ckt/layout.h"
#include "ckt/lds.h"
#include "ckt/mma.h"
#include "ckt/nested.h"
#include "ckt/param.h"
#include "ckt/runtime.h"
#include "ckt/sfc.h"
#include "ckt/stream.h"
#include "ckt/target.h"
#include "ckt/tma.h"
#include "ckt/visual.h"
#include "ckt/wgmma.h"

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
