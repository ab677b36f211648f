/* ckt — hardware models of the targets: wave size, LDS/shared-memory banks and size, matrix
 * instructions, and per-instruction lane phases held as data (each table marked documented
 * or assumed). */
#ifndef CKT_TARGET_H
#define CKT_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "ckt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CKT_MAX_LANES 64
#define CKT_MAX_PHASES 16

typedef enum { CKT_VENDOR_AMD, CKT_VENDOR_NVIDIA } ckt_vendor;

/* One LDS instruction: its access width and which lanes are served together (a phase). */
typedef struct ckt_lds_instr {
    const char *name;  /* "ds_read_b128", "lds128", ... */
    int bytes;         /* 4, 8 or 16 per lane */
    int is_write;
    int nphases;
    int lanes_per_phase;
    int8_t lanes[CKT_MAX_PHASES][CKT_MAX_LANES]; /* lanes of each phase */
    bool documented;   /* false: an assumption (see docs/sfc_lds.md) */
    bool merge_pairs;  /* phases (0,1), (2,3), ... share one wavefront when together conflict-free */
    const char *source;
} ckt_lds_instr;

typedef struct ckt_target {
    char name[16];
    ckt_vendor vendor;
    int wave_size, lds_banks, bank_bytes;
    int64_t lds_bytes;
    const char *matrix; /* comma-separated matrix instructions */
    int ninstr;
    ckt_lds_instr instr[12];
} ckt_target;

/* "gfx908", "gfx90a", "gfx942", "gfx950", "sm_80", "sm_90"; "cpu:<gpu>" gives the emulated GPU's model. */
ckt_status ckt_target_get(const char *name, ckt_target *out, ckt_error *err);
const char *ckt_target_names(void); /* "gfx908, gfx90a, ..." */
/* An instruction by name, or by width and direction ("read"/"write" with 4/8/16 bytes). */
const ckt_lds_instr *ckt_target_instr(const ckt_target *t, const char *name);
const ckt_lds_instr *ckt_target_instr_for(const ckt_target *t, int bytes, int is_write);

#ifdef __cplusplus
}
#endif
#endif
