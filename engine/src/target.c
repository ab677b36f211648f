/* The hardware models: AMD's CDNA ISA guides, NVIDIA's CUDA programming guide, and AMD's note on
 * LDS bank conflicts and the XOR preshuffle (CK Tile's documentation of LDS bank conflicts). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ckt/target.h"

static const char *const known =
    "gfx908, gfx90a, gfx942, gfx950, sm_80, sm_90, sm_90a (and cpu:<one of them>)";

const char *ckt_target_names(void) { return known; }

/* Phases of `per` consecutive lanes. */
static void consecutive(ckt_lds_instr *in, const char *name, int bytes, int is_write, int wave,
                        int per, bool doc, const char *src)
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

/* ds_read_b128 on CDNA: 8 phases of 8 lanes, 0:3+20:23, 4:7+16:19, ... (AMD's note on LDS bank
 * conflicts). */
static void cdna_read_b128(ckt_lds_instr *in)
{
    static const int starts[8][2] = {{0, 20},  {4, 16},  {8, 28},  {12, 24},
                                     {32, 52}, {36, 48}, {40, 60}, {44, 56}};
    consecutive(in, "ds_read_b128", 16, 0, 64, 8, true,
                "AMD's note on LDS bank conflicts (CK Tile documentation)");
    for (int p = 0; p < 8; p++)
        for (int k = 0; k < 4; k++) {
            in->lanes[p][k] = (int8_t)(starts[p][0] + k);
            in->lanes[p][4 + k] = (int8_t)(starts[p][1] + k);
        }
}

/* The processors of one product and what each holds, for occupancy. */
typedef struct product {
    int sm_count;
    int64_t regs_per_sm, lds_per_sm;
} product;

/* AMD CDNA: 4 SIMDs a CU; 1024 threads a workgroup; registers allocated 8 at a time (the vendors'
 * occupancy calculators); 16 workgroups a CU is assumed (LLVM's AMDGPU model: barrier resources).
 */
static void amd_resources(ckt_target *t, product p)
{
    t->sm_count = p.sm_count;
    t->regs_per_sm = p.regs_per_sm;
    t->regs_per_thread_max = t->unified_agprs ? 512 : 256; /* VGPRs (+ AGPRs when unified) */
    t->reg_granule = 8;
    t->lds_per_sm = p.lds_per_sm;
    t->lds_per_block = t->lds_bytes;
    t->lds_reserved = 0;
    t->simds = 4;
    t->threads_per_sm_max = t->simds * t->max_waves * t->wave_size;
    t->threads_per_block_max = 1024;
    t->blocks_per_sm_max = 16;
}

static void amd(ckt_target *t, const char *name, int banks, int64_t lds, const char *matrix,
                product p)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->vendor = CKT_VENDOR_AMD;
    t->wave_size = 64;
    t->lds_banks = banks;
    t->bank_bytes = 4;
    t->lds_bytes = lds;
    t->matrix = matrix;
    /* CDNA1 (gfx908): 256 VGPRs and a separate AGPR file, 10 waves a SIMD; CDNA2 and later: 512
     * unified, 8 waves */
    bool cdna1 = !strcmp(name, "gfx908");
    t->reg_file = cdna1 ? 256 : 512;
    t->max_waves = cdna1 ? 10 : 8;
    t->unified_agprs = !cdna1;
    ckt_lds_instr *in = t->instr;
    /* 32-bit: as many lanes per phase as there are banks; 64-bit: 4 phases of 16 lanes (Triton's
     * AMD model) */
    consecutive(&in[0], "ds_read_b32", 4, 0, 64, banks, false,
                "assumed: one phase per `banks` lanes");
    consecutive(&in[1], "ds_write_b32", 4, 1, 64, banks, false,
                "assumed: one phase per `banks` lanes");
    consecutive(&in[2], "ds_read_b64", 8, 0, 64, banks / 2, false,
                "assumed: Triton's AMD backend model (4 phases of 16 lanes on 32 banks)");
    consecutive(&in[3], "ds_write_b64", 8, 1, 64, banks / 2, false,
                "assumed: Triton's AMD backend model");
    if (banks == 32) {
        cdna_read_b128(&in[4]);
        consecutive(&in[5], "ds_write_b128", 16, 1, 64, 8, true,
                    "AMD's note on LDS bank conflicts (CK Tile documentation)");
    } else {
        consecutive(&in[4], "ds_read_b128", 16, 0, 64, banks / 4, false,
                    "assumed: 64 banks serve 16 lanes of 16 bytes per phase");
        consecutive(&in[5], "ds_write_b128", 16, 1, 64, banks / 4, false,
                    "assumed: 64 banks serve 16 lanes of 16 bytes per phase");
    }
    t->ninstr = 6;
    amd_resources(t, p);
}

/* NVIDIA sm_80 / sm_90: 64 K registers, 255 a thread, allocated 256 a warp (8 a thread); 2048
 * threads and 32 blocks an SM, 1024 threads a block; 1 KiB of shared memory an SM keeps for each
 * resident block (CUDA programming guide, compute capabilities table; occupancy calculator). */
static void nvidia_resources(ckt_target *t, product p)
{
    t->sm_count = p.sm_count;
    t->regs_per_sm = p.regs_per_sm;
    t->regs_per_thread_max = 255;
    t->reg_granule = 8;
    t->lds_per_sm = p.lds_per_sm;
    t->lds_per_block = t->lds_bytes;
    t->lds_reserved = 1 << 10;
    t->simds = 1;
    t->threads_per_sm_max = 2048;
    t->threads_per_block_max = 1024;
    t->blocks_per_sm_max = 32;
}

static void nvidia(ckt_target *t, const char *name, int64_t smem, const char *matrix, product p)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->vendor = CKT_VENDOR_NVIDIA;
    t->wave_size = 32;
    t->lds_banks = 32;
    t->bank_bytes = 4;
    t->lds_bytes = smem;
    t->matrix = matrix;
    t->reg_file = 65536; /* sm_80, sm_90: 64 K registers and 64 warps an SM */
    t->max_waves = 64;
    ckt_lds_instr *in = t->instr;
    const char *doc =
        "CUDA programming guide: 32-bit one phase of 32 lanes, 64-bit two of 16, 128-bit four of 8";
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
    nvidia_resources(t, p);
}

/* The modelled architectures, in the order ckt_target_modelled_at gives them. */
static const char *const modelled[] = {"gfx908", "gfx90a", "gfx942", "gfx950",
                                       "sm_80",  "sm_90",  "sm_90a", NULL};

const char *ckt_target_modelled_at(int i)
{
    return i >= 0 && i < (int)(sizeof modelled / sizeof *modelled) - 1 ? modelled[i] : NULL;
}

/* The hardware model of a modelled architecture; 0 when arch has none. The matrix lists name the
 * instructions of ckt/mma.h by ckt's names (others the architecture has by their own), so that
 * which instruction runs where is stated here once. */
static int model(const char *arch, ckt_target *out)
{
    /* the products: MI100 (120 CUs, 256 VGPRs x 64 lanes x 4 SIMDs), one GCD of an MI250X (110
     * CUs, 512 unified registers), MI300X (304 CUs), MI355X (256 CUs, 160 KiB LDS), A100 SXM (108
     * SMs, 164 KiB shared memory an SM, 163 KiB a block), H100 SXM (132 SMs, 228 KiB an SM, 227
     * KiB a block) */
    const product mi100 = {120, 4 * 256 * 64, 64 << 10}, mi250x_gcd = {110, 4 * 512 * 64, 64 << 10};
    const product mi300x = {304, 4 * 512 * 64, 64 << 10}, mi355x = {256, 4 * 512 * 64, 160 << 10};
    const product a100 = {108, 65536, 164 << 10}, h100 = {132, 65536, 228 << 10};
    if (!strcmp(arch, "gfx908"))
        amd(out, arch, 32, 64 << 10, "mfma_f32_32x32x8f16,mfma_f32_16x16x16f16", mi100);
    else if (!strcmp(arch, "gfx90a"))
        amd(out, arch, 32, 64 << 10,
            "mfma_f32_32x32x8f16,mfma_f32_16x16x16f16,mfma_f32_32x32x8bf16_1k,mfma_f32_"
            "16x16x16bf16_1k,mfma_f64_16x16x4f64",
            mi250x_gcd);
    else if (!strcmp(arch, "gfx942"))
        amd(out, arch, 32, 64 << 10,
            "mfma_f32_32x32x8f16,mfma_f32_16x16x16f16,mfma_f32_16x16x32_fp8,mfma_f32_32x32x8bf16_"
            "1k,mfma_f32_16x16x16bf16_1k",
            mi300x);
    else if (!strcmp(arch, "gfx950"))
        amd(out, arch, 64, 160 << 10,
            "mfma_f32_32x32x8f16,mfma_f32_16x16x16f16,mfma_f32_16x16x32_fp8,mfma_f32_32x32x8bf16_"
            "1k,mfma_f32_16x16x16bf16_1k,mfma_scale_f32_32x32x64_f8f6f4",
            mi355x);
    else if (!strcmp(arch, "sm_80"))
        nvidia(out, arch, 163 << 10, "mma_m16n8k16_f16,mma_m16n8k16_bf16,mma_m16n8k8", a100);
    else if (!strcmp(arch, "sm_90"))
        nvidia(out, "sm_90", 227 << 10, "mma_m16n8k16_f16,mma_m16n8k16_bf16,mma_m16n8k8", h100);
    /* sm_90a is sm_90 with the architecture-specific features (wgmma, setmaxnreg) enabled in
     * NVRTC: the same shared memory and banks, and wgmma */
    else if (!strcmp(arch, "sm_90a"))
        nvidia(out, "sm_90", 227 << 10,
               "mma_m16n8k16_f16,mma_m16n8k16_bf16,mma_m16n8k8,wgmma_m64n64k16_f16,wgmma_"
               "m64n128k16_f16,wgmma_m64n256k16_f16,wgmma_m64n64k16_bf16,"
               "wgmma_m64n128k16_bf16,wgmma_m64n256k16_bf16,wgmma_m64n192k16_f16,"
               "wgmma_m64n192k16_bf16,wgmma_m64n208k16_f16,wgmma_m64n208k16_bf16,"
               "wgmma_m64n176k16_f16,wgmma_m64n176k16_bf16,"
               "wgmma_m64n64k32_e4m3,"
               "wgmma_m64n128k32_e4m3,wgmma_m64n256k32_e4m3,wgmma_m64n64k32_e5m2,"
               "wgmma_m64n128k32_e5m2,wgmma_m64n256k32_e5m2",
               h100);
    else
        return 0;
    out->tma = !strcmp(out->name, "sm_90"); /* sm_90 and sm_90a */
    out->wgmma = !strcmp(arch, "sm_90a");
    out->stmatrix = out->tma;
    return 1;
}

/* gfx<hex digits> (AMD) or sm_<digits>[a] (NVIDIA): a name the runtime compilers may know. */
static int arch_shaped(const char *n, ckt_vendor *vendor)
{
    if (!strncmp(n, "gfx", 3) && n[3] && strspn(n + 3, "0123456789abcdef") == strlen(n + 3)) {
        *vendor = CKT_VENDOR_AMD;
        return 1;
    }
    if (!strncmp(n, "sm_", 3) && n[3]) {
        size_t digits = strspn(n + 3, "0123456789");
        *vendor = CKT_VENDOR_NVIDIA;
        return digits > 0 && (n[3 + digits] == 0 || (n[3 + digits] == 'a' && n[4 + digits] == 0));
    }
    return 0;
}

/* Architectures the compilers are known to take (others: hipRTC is probed, NVRTC refuses). */
static int compiler_knows(const char *arch)
{
    static const char *const known[] = {"gfx908", "gfx90a", "sm_80",  "sm_86",
                                        "sm_89",  "sm_90",  "sm_90a", NULL};
    for (const char *const *k = known; *k; k++)
        if (!strcmp(*k, arch)) return 1;
    return 0;
}

static ckt_status unknown(const char *name, ckt_error *err)
{
    return ckt_fail(err, CKT_EUNSUPPORTED,
                    "target: unknown target '%.64s'; known: cpu, %s, or another gfx*/sm_* "
                    "architecture for hipRTC/NVRTC",
                    name, known);
}

ckt_status ckt_target_parse(const char *name, ckt_target_record *out, ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "target: out is NULL");
    if (!name || !*name)
        return ckt_fail(err, CKT_EINVAL,
                        "target: the name is empty (use cpu, cpu:gfx90a, gfx90a, sm_90, ...)");
    memset(out, 0, sizeof *out);
    if (strlen(name) >= sizeof out->name) return unknown(name, err);
    snprintf(out->name, sizeof out->name, "%s", name);
    int cpu = !strcmp(name, "cpu") || !strncmp(name, "cpu:", 4);
    const char *arch = !strcmp(name, "cpu") ? CKT_CPU_DEFAULT_ARCH : cpu ? name + 4 : name;
    ckt_vendor vendor;
    if (!arch_shaped(arch, &vendor)) return unknown(name, err);
    snprintf(out->arch, sizeof out->arch, "%s", arch);
    out->modelled = model(arch, &out->hw);
    if (cpu && !out->modelled) return unknown(name, err); /* the emulation needs the model */
    out->emulated = cpu;
    out->dialect = cpu                        ? CKT_DIALECT_C
                   : vendor == CKT_VENDOR_AMD ? CKT_DIALECT_HIP
                                              : CKT_DIALECT_CUDA;
    out->compiler = cpu                        ? CKT_COMPILER_HOST_CC
                    : vendor == CKT_VENDOR_AMD ? CKT_COMPILER_HIPRTC
                                               : CKT_COMPILER_NVRTC;
    out->runtime = cpu                        ? CKT_BACKEND_CPU
                   : vendor == CKT_VENDOR_AMD ? CKT_BACKEND_HIP
                                              : CKT_BACKEND_CUDA;
    out->compiler_known = cpu || compiler_knows(arch);
    out->wave_size = out->modelled ? out->hw.wave_size : 0;
    out->lds_max_bytes = out->modelled ? out->hw.lds_bytes : 0;
    /* CUDA: a __shared__ array is at most 48 KiB; more is dynamic shared memory, opted in at launch
     */
    out->lds_static_bytes = out->dialect == CKT_DIALECT_CUDA ? 48 << 10 : 0;
    out->matrix = out->modelled ? out->hw.matrix : "";
    return CKT_OK;
}

ckt_status ckt_target_get(const char *name, ckt_target *out, ckt_error *err)
{
    if (!name || !out) return ckt_fail(err, CKT_EINVAL, "target: name and out must not be NULL");
    ckt_target_record r;
    if (ckt_target_parse(name, &r, err) != CKT_OK || !r.modelled)
        return ckt_fail(err, CKT_EINVAL, "target: unknown target '%.64s'; known: %s", name, known);
    *out = r.hw;
    return CKT_OK;
}

ckt_status ckt_target_check_device(const ckt_target_record *r, const char *device_arch,
                                   ckt_error *err)
{
    if (!r || !device_arch)
        return ckt_fail(err, CKT_EINVAL, "launch: target and device architecture must not be NULL");
    size_t n = strlen(r->arch);
    /* sm_90a, sm_100a, ...: PTX with architecture-specific features (wgmma, setmaxnreg) that
     * runs on exactly that compute capability, not on later ones (NVIDIA's PTX ISA, "Target ISA
     * notes"); other architectures run on their own and later devices, which the driver checks */
    if (r->emulated || r->runtime != CKT_BACKEND_CUDA || n < 2 || r->arch[n - 1] != 'a')
        return CKT_OK;
    if (strlen(device_arch) == n - 1 && !strncmp(device_arch, r->arch, n - 1)) return CKT_OK;
    return ckt_fail(err, CKT_EUNSUPPORTED,
                    "launch: a binary for %s uses architecture-specific instructions (wgmma) and "
                    "runs only on compute capability %.*s.%.*s devices; "
                    "this device is %s (compile for %.*s or run on an H100/H200 class GPU)",
                    r->arch, (int)(n - 5), r->arch + 3, 1, r->arch + n - 2, device_arch,
                    (int)(n - 1), r->arch);
}

/* ---- occupancy ---- */

const char *ckt_limiter_name(ckt_limiter l)
{
    static const char *const names[] = {"blocks", "threads", "registers", "lds"};
    return (unsigned)l < sizeof names / sizeof *names ? names[l] : "?";
}

static ckt_status occupancy_args(const ckt_target_record *t, int64_t threads, int64_t registers,
                                 int64_t lds_bytes, const ckt_occupancy *out, ckt_error *err)
{
    if (!t || !out) return ckt_fail(err, CKT_EINVAL, "occupancy: target and out must not be NULL");
    const ckt_target *h = &t->hw;
    if (!t->modelled)
        return ckt_fail(err, CKT_EINVAL, "occupancy: target '%s' has no hardware model (known: %s)",
                        t->name, known);
    if (threads < 1 || threads > h->threads_per_block_max)
        return ckt_fail(err, CKT_EINVAL, "occupancy: threads %lld must be 1 to %d on %s",
                        (long long)threads, h->threads_per_block_max, t->name);
    if (registers < 0 || registers > h->regs_per_thread_max)
        return ckt_fail(err, CKT_EINVAL,
                        "occupancy: registers %lld must be 0 (unknown) to %d a thread on %s",
                        (long long)registers, h->regs_per_thread_max, t->name);
    if (lds_bytes < 0 || lds_bytes > h->lds_per_block)
        return ckt_fail(err, CKT_EINVAL, "occupancy: lds_bytes %lld must be 0 to %lld on %s",
                        (long long)lds_bytes, (long long)h->lds_per_block, t->name);
    return CKT_OK;
}

/* Each resource's bound on the blocks of an SM, in ckt_limiter's order; the smallest wins. */
ckt_status ckt_target_occupancy(const ckt_target_record *t, int64_t threads, int64_t registers,
                                int64_t lds_bytes, ckt_occupancy *out, ckt_error *err)
{
    ckt_status s = occupancy_args(t, threads, registers, lds_bytes, out, err);
    if (s) return s;
    const ckt_target *h = &t->hw;
    int64_t waves = (threads + h->wave_size - 1) / h->wave_size; /* a block's waves */
    int64_t bound[4];
    bound[CKT_LIMIT_BLOCKS] = h->blocks_per_sm_max;
    bound[CKT_LIMIT_THREADS] = h->threads_per_sm_max / h->wave_size / waves;
    bound[CKT_LIMIT_REGISTERS] = INT64_MAX;
    if (registers > 0) { /* AMD: each SIMD's register file holds whole waves */
        int64_t r = (registers + h->reg_granule - 1) / h->reg_granule * h->reg_granule;
        int64_t per_simd = h->regs_per_sm / h->simds / (r * h->wave_size);
        bound[CKT_LIMIT_REGISTERS] = per_simd * h->simds / waves;
    }
    bound[CKT_LIMIT_LDS] = INT64_MAX;
    if (lds_bytes + h->lds_reserved > 0)
        bound[CKT_LIMIT_LDS] = h->lds_per_sm / (lds_bytes + h->lds_reserved);
    int best = 0;
    for (int i = 1; i < 4; i++)
        if (bound[i] < bound[best]) best = i;
    out->blocks_per_sm = (int)bound[best];
    out->limiter = (ckt_limiter)best;
    out->waves = (int)(bound[best] * waves / h->simds);
    return CKT_OK;
}

const char *ckt_dialect_name(ckt_dialect_kind d)
{
    return d == CKT_DIALECT_HIP ? "hip" : d == CKT_DIALECT_CUDA ? "cuda" : "c";
}
const char *ckt_compiler_name(ckt_compiler_kind c)
{
    return c == CKT_COMPILER_HIPRTC ? "hiprtc" : c == CKT_COMPILER_NVRTC ? "nvrtc" : "cc";
}
const char *ckt_backend_name(ckt_backend b)
{
    return b == CKT_BACKEND_HIP ? "hip" : b == CKT_BACKEND_CUDA ? "cuda" : "cpu";
}

const ckt_lds_instr *ckt_target_instr(const ckt_target *t, const char *name)
{
    if (!t || !name) return NULL;
    for (int i = 0; i < t->ninstr; i++)
        if (!strcmp(t->instr[i].name, name)) return &t->instr[i];
    /* generic names: read_b128, write_b64, ... */
    int bytes = 0, w = -1;
    if (sscanf(name, "read_b%d", &bytes) == 1)
        w = 0;
    else if (sscanf(name, "write_b%d", &bytes) == 1)
        w = 1;
    return w < 0 ? NULL : ckt_target_instr_for(t, bytes / 8, w);
}

const ckt_lds_instr *ckt_target_instr_for(const ckt_target *t, int bytes, int is_write)
{
    if (!t) return NULL;
    for (int i = 0; i < t->ninstr; i++)
        if (t->instr[i].bytes == bytes && t->instr[i].is_write == is_write) return &t->instr[i];
    return NULL;
}
