/* The LDS bank model: bank = (byte address / bank bytes) mod banks; lanes conflict only inside
 * one phase; the same word in a phase is a broadcast; a phase costs the largest number of
 * distinct words any one bank must serve. */
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ckt/lds.h"
#include "tv_internal.h"

/* The largest number of distinct words any bank serves for phases p and p+1 together. */
static int pair_ways(const ckt_target *t, const ckt_lds_instr *in, const int64_t *addr, int p)
{
    int64_t words[CKT_MAX_LANES * 8];
    int nw = 0, per = in->bytes / t->bank_bytes, ways = 0;
    for (int q = p; q <= p + 1; q++)
        for (int k = 0; k < in->lanes_per_phase; k++) {
            int64_t a = addr[in->lanes[q][k]];
            if (a < 0) continue;
            for (int w = 0; w < per; w++) words[nw++] = a / t->bank_bytes + w;
        }
    for (int i = 0; i < nw; i++) {
        int count = 0, dup = 0;
        for (int j = 0; j < i && !dup; j++) dup = words[j] == words[i];
        if (dup) continue;
        for (int j = 0; j < nw; j++) {
            if (words[j] % t->lds_banks != words[i] % t->lds_banks) continue;
            int first = 1;
            for (int q = 0; q < j && first; q++) first = words[q] != words[j];
            count += first;
        }
        if (count > ways) ways = count;
    }
    return ways;
}

/* NVIDIA packs a 64/128-bit request into half as many phases when neighbouring threads ask for
 * the same address: every pair (n, n^1), or every pair (n, n^2), equal (inactive lanes match
 * anything). Measured on an H100 with ncu: tests/gpu/bank_probe.c. */
static bool packed(const int64_t *addr, int nlanes)
{
    for (int x = 1; x <= 2; x++) {
        bool all = true;
        for (int n = 0; n < nlanes && all; n++)
            all = addr[n] < 0 || addr[n ^ x] < 0 || addr[n] == addr[n ^ x];
        if (all) return true;
    }
    return false;
}

ckt_status ckt_lds_analyze(const ckt_target *t, const ckt_lds_instr *in, const int64_t *addr,
                           int nlanes, ckt_lds_result *out, ckt_error *err)
{
    if (!t || !in || !addr || !out) return ckt_fail(err, CKT_EINVAL, "lds.analyze: NULL argument");
    if (nlanes != t->wave_size)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.analyze: %d addresses given, %s has %d lanes per wave", nlanes,
                        t->name, t->wave_size);
    /* the instruction must come from this target's tables: its lanes index addr[] */
    if (in->nphases < 1 || in->nphases > CKT_MAX_PHASES || in->lanes_per_phase < 1 ||
        in->nphases * in->lanes_per_phase != t->wave_size || in->bytes < t->bank_bytes ||
        in->bytes % t->bank_bytes != 0 || in->bytes > 4 * t->bank_bytes)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.analyze: instruction %s does not fit the %d-lane waves of %s",
                        in->name ? in->name : "?", t->wave_size, t->name);
    for (int p = 0; p < in->nphases; p++)
        for (int k = 0; k < in->lanes_per_phase; k++)
            if (in->lanes[p][k] < 0 || in->lanes[p][k] >= t->wave_size)
                return ckt_fail(
                    err, CKT_EINVAL,
                    "lds.analyze: instruction %s names lane %d, outside the %d-lane waves of %s",
                    in->name ? in->name : "?", in->lanes[p][k], t->wave_size, t->name);
    ckt_lds_result r;
    memset(&r, 0, sizeof r);
    r.nphases = in->nphases;
    int words_per_lane = in->bytes / t->bank_bytes;
    for (int p = 0; p < in->nphases; p++) {
        ckt_lds_phase_result *ph = &r.phases[p];
        int64_t words[CKT_MAX_LANES * 4];
        int nw = 0;
        for (int k = 0; k < in->lanes_per_phase; k++) {
            int lane = in->lanes[p][k];
            int64_t a = addr[lane];
            if (a < 0) continue;
            if (a % in->bytes != 0)
                return ckt_fail(
                    err, CKT_EINVAL,
                    "lds.analyze: lane %d address %lld is not aligned to the %d-byte access of %s",
                    lane, (long long)a, in->bytes, in->name);
            if (a > t->lds_bytes - in->bytes)
                return ckt_fail(err, CKT_EINVAL,
                                "lds.analyze: lane %d address %lld + %d bytes is outside the "
                                "%lld-byte LDS of %s",
                                lane, (long long)a, in->bytes, (long long)t->lds_bytes, t->name);
            ph->lanes[ph->nlanes] = (int8_t)lane;
            ph->bank[ph->nlanes++] = (int16_t)((a / t->bank_bytes) % t->lds_banks);
            for (int w = 0; w < words_per_lane; w++) words[nw++] = a / t->bank_bytes + w;
        }
        /* distinct words per bank */
        int ways = 0;
        for (int i = 0; i < nw; i++) {
            bool dup = false;
            for (int j = 0; j < i && !dup; j++) dup = words[j] == words[i];
            if (dup) continue;
            int bank = (int)(words[i] % t->lds_banks), count = 0;
            for (int j = 0; j < nw; j++) {
                if (words[j] % t->lds_banks != bank) continue;
                bool first = true;
                for (int q = 0; q < j && first; q++) first = words[q] != words[j];
                count += first;
            }
            if (count > ways) ways = count;
        }
        ph->ways = ways;
        if (ways > r.ways) r.ways = ways;
    }
    /* wavefronts: one per active phase and conflict way; a packed request (merge_pairs) serves
     * the phases two by two */
    bool pack = in->merge_pairs && packed(addr, nlanes);
    for (int p = 0; p < in->nphases; p++) {
        if (pack && p % 2 == 0 && p + 1 < in->nphases &&
            (r.phases[p].nlanes > 0 || r.phases[p + 1].nlanes > 0)) {
            r.cycles += pair_ways(t, in, addr, p);
            r.ideal_cycles += 1;
            p++;
            continue;
        }
        r.cycles += r.phases[p].ways;
        r.ideal_cycles += r.phases[p].nlanes > 0;
    }
    *out = r;
    return CKT_OK;
}

ckt_status ckt_lds_analyze_tensor(const ckt_target *t, const ckt_lds_tensor *lt,
                                  const ckt_layout *thread_map, int64_t vector, int is_write,
                                  ckt_lds_tensor_result *out, ckt_error *err)
{
    if (!t || !lt || !thread_map || !out)
        return ckt_fail(err, CKT_EINVAL, "lds.analyze_tensor: NULL argument");
    if (lt->elem_bytes <= 0)
        return ckt_fail(err, CKT_EINVAL, "lds.analyze_tensor: element size %d must be positive",
                        lt->elem_bytes);
    if (vector <= 0)
        return ckt_fail(err, CKT_EINVAL, "lds.analyze_tensor: vector %lld must be positive",
                        (long long)vector);
    /* 1- and 2-byte accesses (ds_read_u16, LDS.U16, ...) are served like 32-bit ones: lanes in
     * the same word share it, so they are analysed as the 32-bit access of their word */
    int64_t bytes = vector <= 16 && lt->elem_bytes <= 16 ? vector * lt->elem_bytes : 0;
    const ckt_lds_instr *in = bytes == 1 || bytes == 2
                                  ? ckt_target_instr_for(t, 4, is_write)
                                  : ckt_target_instr_for(t, (int)bytes, is_write);
    if (!in)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.analyze_tensor: no %s instruction on %s moves vector %lld x %d bytes; "
                        "use 1, 2, 4, 8 or 16 bytes per lane",
                        is_write ? "write" : "read", t->name, (long long)vector, lt->elem_bytes);
    if (ckt_layout_rank(thread_map) != 2)
        return ckt_fail(
            err, CKT_EINVAL,
            "lds.analyze_tensor: thread_map must be a (thread, value) layout of rank 2");
    ckt_layout tm, vm;
    ckt_layout_mode(thread_map, 0, &tm, err);
    ckt_layout_mode(thread_map, 1, &vm, err);
    int64_t nthreads = ckt_layout_size(&tm), nvalues = ckt_layout_size(&vm),
            size = ckt_layout_size(&lt->layout);
    if (nthreads <= 0 || nvalues <= 0)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.analyze_tensor: thread_map has no threads or no values");
    if (nthreads % t->wave_size != 0)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.analyze_tensor: %lld threads is not a multiple of the wave size %d",
                        (long long)nthreads, t->wave_size);
    if (nthreads > CKT_WORK_LIMIT / nvalues / vector)
        return ckt_fail(err, CKT_ECAPACITY,
                        "lds.analyze_tensor: %lld threads x %lld values x %lld elements is more "
                        "than the analysis limit %lld",
                        (long long)nthreads, (long long)nvalues, (long long)vector,
                        (long long)CKT_WORK_LIMIT);
    ckt_lds_tensor_result r;
    memset(&r, 0, sizeof r);
    int64_t addr[CKT_MAX_LANES];
    for (int64_t w0 = 0; w0 < nthreads; w0 += t->wave_size)
        for (int64_t v = 0; v < nvalues; v++) {
            for (int l = 0; l < t->wave_size; l++) {
                int64_t idx = ckt_tv_offset(&tm, &vm, w0 + l, v, err), off;
                if (idx < 0 || idx >= size)
                    return ckt_fail(err, CKT_EINVAL,
                                    "lds.analyze_tensor: thread %lld value %lld reaches tile index "
                                    "%lld, outside the %lld-element tile",
                                    (long long)(w0 + l), (long long)v, (long long)idx,
                                    (long long)size);
                /* the vector: `vector` consecutive elements in memory from the thread's element;
                 * a swizzle must keep them consecutive (M >= log2(vector)) */
                int64_t o;
                ckt_status st = ckt_layout_eval(&lt->layout, idx, &o, err);
                if (st) return st;
                off = lt->sw.b > 0 ? ckt_swizzle_apply(lt->sw, o + lt->sw_offset) : o;
                for (int64_t e = 1; e < vector && lt->sw.b > 0; e++) {
                    int64_t o2 = ckt_swizzle_apply(lt->sw, o + lt->sw_offset + e);
                    if (o2 != off + e)
                        return ckt_fail(
                            err, CKT_EINVAL,
                            "lds.analyze_tensor: the swizzle Sw<%d,%d,%d> splits the %lld-element "
                            "vector at offset %lld (element %lld lands at %lld, not %lld)",
                            lt->sw.b, lt->sw.m, lt->sw.s, (long long)vector, (long long)o,
                            (long long)e, (long long)o2, (long long)(off + e));
                }
                addr[l] = off * lt->elem_bytes;
                if (bytes < 4) {
                    if (addr[l] % bytes != 0)
                        return ckt_fail(err, CKT_EINVAL,
                                        "lds.analyze_tensor: thread %lld value %lld: byte address "
                                        "%lld is not aligned to its %lld-byte access",
                                        (long long)(w0 + l), (long long)v, (long long)addr[l],
                                        (long long)bytes);
                    addr[l] -= addr[l] % 4;
                }
            }
            ckt_lds_result one;
            ckt_status st = ckt_lds_analyze(t, in, addr, t->wave_size, &one, err);
            if (st) return st;
            r.instructions++;
            r.instr = in->name;
            r.access_bytes = (int)bytes;
            r.cycles += one.cycles;
            r.ideal_cycles += one.ideal_cycles;
            if (one.ways > r.ways || r.instructions == 1) {
                if (one.ways > r.ways) r.ways = one.ways;
                r.first_worst = one;
            }
        }
    *out = r;
    return CKT_OK;
}

ckt_status ckt_lds_pad(const ckt_layout *l, int banks, int bank_bytes, int elem_bytes,
                       ckt_layout *out, ckt_error *err)
{
    if (!l || !out) return ckt_fail(err, CKT_EINVAL, "lds.pad: NULL argument");
    if (banks < 0 || banks > (1 << 20))
        return ckt_fail(err, CKT_EINVAL, "lds.pad: banks %d must be in [0, 2^20]", banks);
    if (bank_bytes <= 0 || bank_bytes > 64)
        return ckt_fail(err, CKT_EINVAL, "lds.pad: bank width %d bytes must be in [1, 64]",
                        bank_bytes);
    if (elem_bytes <= 0 || (banks * bank_bytes) % elem_bytes != 0)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.pad: %d banks of %d bytes is not a whole number of %d-byte elements",
                        banks, bank_bytes, elem_bytes);
    if (ckt_layout_rank(l) != 2)
        return ckt_fail(err, CKT_EINVAL, "lds.pad: need a rank-2 (rows, cols) layout, got rank %d",
                        ckt_layout_rank(l));
    ckt_layout p = *l;
    /* the row mode is the one with the larger stride; its stride grows by the padding */
    if (p.stride.arity[1] != CKT_LEAF || p.stride.arity[2] != CKT_LEAF)
        return ckt_fail(err, CKT_EINVAL, "lds.pad: the modes must be integers");
    int row = p.stride.value[1] >= p.stride.value[2] ? 1 : 2;
    int64_t extra = (int64_t)banks * bank_bytes / elem_bytes;
    if (ckt_add_ovf(p.stride.value[row], extra, &p.stride.value[row]))
        return ckt_fail(err, CKT_EOVERFLOW, "lds.pad: stride overflows");
    return ckt_layout_make(out, &p.shape, &p.stride, err);
}

static int log2_exact(int64_t v)
{
    for (int k = 0; k < 62; k++)
        if (((int64_t)1 << k) == v) return k;
    return -1;
}

ckt_status ckt_lds_xor_preshuffle(int64_t k_per_block, int64_t k_pack, ckt_swizzle *out,
                                  ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "lds.xor_preshuffle: out must not be NULL");
    if (k_per_block <= 0 || k_pack <= 0)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.xor_preshuffle: k_per_block %lld and k_pack %lld must be positive",
                        (long long)k_per_block, (long long)k_pack);
    if (k_per_block % k_pack != 0)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.xor_preshuffle: k_pack %lld does not divide k_per_block %lld",
                        (long long)k_pack, (long long)k_per_block);
    int b = log2_exact(k_per_block / k_pack), m = log2_exact(k_pack);
    if (b < 0 || m < 0)
        return ckt_fail(
            err, CKT_EINVAL,
            "lds.xor_preshuffle: KPerBlock/KPack = %lld and KPack = %lld must be powers of two",
            (long long)(k_per_block / k_pack), (long long)k_pack);
    /* offset = row*KPerBlock + col: XOR the low B bits of row (bits M+B..) into the KPack-unit
     * column bits (M..) */
    return ckt_swizzle_make(b, m, b, out, err);
}
