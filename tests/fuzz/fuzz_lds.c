/* Space-filling curves and the bank model from arbitrary bytes. */
#include "ckt/ckt.h"
#include "ckt/lds.h"
#include "ckt/sfc.h"
#include "ckt/target.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size};
    ckt_error err;
    err.msg[0] = 0;
    int n = fz_u8(&in) % 10;
    int64_t len[10], ord[10], spa[10];
    for (int i = 0; i < n; i++) { len[i] = fz_int(&in); ord[i] = fz_int(&in); spa[i] = fz_int(&in); }
    ckt_sfc s;
    if (ckt_sfc_make(n, len, ord, spa, fz_u8(&in) & 1, &s, &err) == CKT_OK) {
        int64_t c[CKT_SFC_MAX_DIM];
        bool partial;
        FUZZ_CHECK(ckt_sfc_index(&s, s.num_access - 1, c, &partial, &err) == CKT_OK);
        if (s.num_access <= 4096) {
            ckt_sfc_locality l;
            FUZZ_CHECK(ckt_sfc_locality_of(&s, 1, 16, &l, &err) == CKT_OK);
        }
    } else {
        FUZZ_CHECK(err.msg[0] != 0);
    }
    static const char *const targets[] = {"gfx908", "gfx90a", "gfx942", "gfx950", "sm_80", "sm_90"};
    ckt_target t;
    if (ckt_target_get(targets[fz_u8(&in) % 6], &t, &err) != CKT_OK) return 0;
    const ckt_lds_instr *instr = &t.instr[fz_u8(&in) % t.ninstr];
    int64_t addr[CKT_MAX_LANES];
    for (int l = 0; l < t.wave_size; l++) addr[l] = (int64_t)((uint64_t)fz_int(&in) * (fz_u8(&in) % 17u));
    ckt_lds_result r;
    if (ckt_lds_analyze(&t, instr, addr, t.wave_size, &r, &err) == CKT_OK) FUZZ_CHECK(r.cycles >= r.ideal_cycles && r.ways <= 64 * 4);
    else FUZZ_CHECK(err.msg[0] != 0);
    return 0;
}
