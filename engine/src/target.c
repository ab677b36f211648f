/* The hardware models: AMD's CDNA ISA guides, NVIDIA's CUDA programming guide, and AMD's note on LDS
 * bank conflicts and the XOR preshuffle (CK Tile's documentation,
 * https://rocm.docs.amd.com/projects/composable_kernel/en/latest/conceptual/ck_tile/hardware/lds_bank_conflicts.html). */
#include <stdio.h>
#include <string.h>

#include "ckt/target.h"

static const char *const known = "gfx908, gfx90a, gfx942, gfx950, sm_80, sm_90 (and cpu:<one of them>)";

const char *ckt_target_names(void) { return known; }

/* Phases of `per` consecutive lanes. */
static void consecutive(ckt_lds_instr *in, const char *name, int bytes, int is_write, int wave, int per, bool doc, const char *src)
{
    memset(in, 0, sizeof *in);
    in->name = name;
    in->bytes = bytes;
    in->is_write = is_write;
    in->nphases = wave / per;
    in->lanes_per_phase = per;
    for (int p = 0; p < in->nphases; p++)
        for (int k = 0; k < per; k++) in->lanes[p][k] = (int8_t)(p * per + k);
    in->documented = doc;
    in->source = src;
}

/* ds_read_b128 on CDNA: 8 phases of 8 lanes, 0:3+20:23, 4:7+16:19, ... (AMD's note on LDS bank conflicts). */
static void cdna_read_b128(ckt_lds_instr *in)
{
    static const int starts[8][2] = {{0, 20}, {4, 16}, {8, 28}, {12, 24}, {32, 52}, {36, 48}, {40, 60}, {44, 56}};
    consecutive(in, "ds_read_b128", 16, 0, 64, 8, true, "AMD's note on LDS bank conflicts (CK Tile documentation)");
    for (int p = 0; p < 8; p++)
        for (int k = 0; k < 4; k++) {
            in->lanes[p][k] = (int8_t)(starts[p][0] + k);
            in->lanes[p][4 + k] = (int8_t)(starts[p][1] + k);
        }
}

static void amd(ckt_target *t, const char *name, int banks, int64_t lds, const char *matrix)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->vendor = CKT_VENDOR_AMD;
    t->wave_size = 64;
    t->lds_banks = banks;
    t->bank_bytes = 4;
    t->lds_bytes = lds;
    t->matrix = matrix;
    ckt_lds_instr *in = t->instr;
    /* 32-bit: as many lanes per phase as there are banks; 64-bit: 4 phases of 16 lanes (Triton's AMD model) */
    consecutive(&in[0], "ds_read_b32", 4, 0, 64, banks, false, "assumed: one phase per `banks` lanes");
    consecutive(&in[1], "ds_write_b32", 4, 1, 64, banks, false, "assumed: one phase per `banks` lanes");
    consecutive(&in[2], "ds_read_b64", 8, 0, 64, banks / 2, false, "assumed: Triton's AMD backend model (4 phases of 16 lanes on 32 banks)");
    consecutive(&in[3], "ds_write_b64", 8, 1, 64, banks / 2, false, "assumed: Triton's AMD backend model");
    if (banks == 32) {
        cdna_read_b128(&in[4]);
        consecutive(&in[5], "ds_write_b128", 16, 1, 64, 8, true, "AMD's note on LDS bank conflicts (CK Tile documentation)");
    } else {
        consecutive(&in[4], "ds_read_b128", 16, 0, 64, banks / 4, false, "assumed: 64 banks serve 16 lanes of 16 bytes per phase");
        consecutive(&in[5], "ds_write_b128", 16, 1, 64, banks / 4, false, "assumed: 64 banks serve 16 lanes of 16 bytes per phase");
    }
    t->ninstr = 6;
}

static void nvidia(ckt_target *t, const char *name, int64_t smem, const char *matrix)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->vendor = CKT_VENDOR_NVIDIA;
    t->wave_size = 32;
    t->lds_banks = 32;
    t->bank_bytes = 4;
    t->lds_bytes = smem;
    t->matrix = matrix;
    ckt_lds_instr *in = t->instr;
    const char *doc = "CUDA programming guide: 32-bit one phase of 32 lanes, 64-bit two of 16, 128-bit four of 8";
    consecutive(&in[0], "lds32", 4, 0, 32, 32, true, doc);
    consecutive(&in[1], "sts32", 4, 1, 32, 32, true, doc);
    consecutive(&in[2], "lds64", 8, 0, 32, 16, true, doc);
    consecutive(&in[3], "sts64", 8, 1, 32, 16, true, doc);
    consecutive(&in[4], "lds128", 16, 0, 32, 8, true, doc);
    consecutive(&in[5], "sts128", 16, 1, 32, 8, true, doc);
    /* measured on an H100 with ncu (tests/gpu/bank_probe.c, 2026-11-22): a broadcast takes 1
     * wavefront for LDS.64 and 2 for LDS.128, so two phases that are conflict-free together
     * are served in one wavefront */
    for (int i = 2; i < 6; i++) in[i].merge_pairs = true;
    t->ninstr = 6;
}

ckt_status ckt_target_get(const char *name, ckt_target *out, ckt_error *err)
{
    if (!name || !out) return ckt_fail(err, CKT_EINVAL, "target: name and out must not be NULL");
    const char *n = strncmp(name, "cpu:", 4) == 0 ? name + 4 : name;
    if (!strcmp(n, "gfx908")) amd(out, n, 32, 64 << 10, "mfma_f32_32x32x8f16,mfma_f32_16x16x16f16");
    else if (!strcmp(n, "gfx90a")) amd(out, n, 32, 64 << 10, "mfma_f32_32x32x8f16,mfma_f32_16x16x16f16,mfma_f32_32x32x8bf16_1k,mfma_f32_16x16x16bf16_1k,mfma_f64_16x16x4f64");
    else if (!strcmp(n, "gfx942")) amd(out, n, 32, 64 << 10, "mfma_f32_32x32x8f16,mfma_f32_16x16x16f16,mfma_f32_16x16x32_fp8,mfma_f32_32x32x8bf16_1k,mfma_f32_16x16x16bf16_1k");
    else if (!strcmp(n, "gfx950")) amd(out, n, 64, 160 << 10, "mfma_f32_32x32x8f16,mfma_f32_16x16x16f16,mfma_f32_16x16x32_fp8,mfma_scale_f32_32x32x64_f8f6f4");
    else if (!strcmp(n, "sm_80")) nvidia(out, n, 163 << 10, "mma_m16n8k16,mma_m16n8k8");
    else if (!strcmp(n, "sm_90")) nvidia(out, n, 227 << 10, "mma_m16n8k16,mma_m16n8k8,wgmma");
    else return ckt_fail(err, CKT_EINVAL, "target: unknown target '%s'; known: %s", name, known);
    return CKT_OK;
}

const ckt_lds_instr *ckt_target_instr(const ckt_target *t, const char *name)
{
    if (!t || !name) return NULL;
    for (int i = 0; i < t->ninstr; i++)
        if (!strcmp(t->instr[i].name, name)) return &t->instr[i];
    /* generic names: read_b128, write_b64, ... */
    int bytes = 0, w = -1;
    if (sscanf(name, "read_b%d", &bytes) == 1) w = 0;
    else if (sscanf(name, "write_b%d", &bytes) == 1) w = 1;
    return w < 0 ? NULL : ckt_target_instr_for(t, bytes / 8, w);
}

const ckt_lds_instr *ckt_target_instr_for(const ckt_target *t, int bytes, int is_write)
{
    if (!t) return NULL;
    for (int i = 0; i < t->ninstr; i++)
        if (t->instr[i].bytes == bytes && t->instr[i].is_write == is_write) return &t->instr[i];
    return NULL;
}
