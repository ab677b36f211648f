/* The layout algebra on arbitrary layouts decoded from the input: every operation returns
 * CKT_OK with a result that satisfies a cheap invariant, or an error with a message. */
#include "ckt/ckt.h"
#include "fuzz_common.h"

static int make(fuzz_input *in, ckt_layout *out)
{
    int r = 1 + fz_u8(in) % 4;
    ckt_tuple s[4], d[4];
    ckt_error err;
    for (int i = 0; i < r; i++) {
        int sub = 1 + fz_u8(in) % 2;
        int64_t sv[2], dv[2];
        for (int k = 0; k < sub; k++) { sv[k] = fz_int(in); dv[k] = fz_int(in); }
        if (sub == 1) { s[i] = ckt_tuple_int(sv[0]); d[i] = ckt_tuple_int(dv[0]); }
        else if (ckt_tuple_flat(&s[i], 2, sv, &err) || ckt_tuple_flat(&d[i], 2, dv, &err)) return 0;
    }
    ckt_tuple S, D;
    if (r == 1) { S = s[0]; D = d[0]; }
    else if (ckt_tuple_make(&S, r, s, &err) || ckt_tuple_make(&D, r, d, &err)) return 0;
    return ckt_layout_make(out, &S, &D, &err) == CKT_OK;
}

static void ok_or_message(ckt_status st, const ckt_error *err, const ckt_layout *r)
{
    if (st != CKT_OK) { FUZZ_CHECK(err->msg[0] != 0); return; }
    FUZZ_CHECK(ckt_layout_size(r) > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size};
    ckt_layout a, b, r;
    ckt_error err;
    if (!make(&in, &a) || !make(&in, &b)) return 0;
    /* cap the work: brute-force checks only on small layouts */
    int small = ckt_layout_size(&a) <= 4096 && ckt_layout_size(&b) <= 4096;
    err.msg[0] = 0;
    ckt_status st = ckt_coalesce(&a, &r, &err);
    ok_or_message(st, &err, &r);
    if (st == CKT_OK && small) {
        FUZZ_CHECK(ckt_layout_size(&r) == ckt_layout_size(&a));
        for (int64_t i = 0; i < ckt_layout_size(&a); i++) {
            int64_t x, y;
            ckt_layout_eval(&a, i, &x, &err);
            ckt_layout_eval(&r, i, &y, &err);
            FUZZ_CHECK(x == y);
        }
    }
    st = ckt_composition(&a, &b, &r, &err);
    ok_or_message(st, &err, &r);
    ok_or_message(ckt_filter(&a, &r, &err), &err, &r);
    ok_or_message(ckt_complement(&a, fz_int(&in), &r, &err), &err, &r);
    ok_or_message(ckt_right_inverse(&a, &r, &err), &err, &r);
    ok_or_message(ckt_left_inverse(&a, &r, &err), &err, &r);
    ok_or_message(ckt_logical_divide(&a, 0, &b, &r, &err), &err, &r);
    ok_or_message(ckt_zipped_divide(&a, 0, &b, &r, &err), &err, &r);
    ok_or_message(ckt_tiled_divide(&a, 0, &b, &r, &err), &err, &r);
    ok_or_message(ckt_flat_divide(&a, 0, &b, &r, &err), &err, &r);
    ok_or_message(ckt_logical_product(&a, &b, &r, &err), &err, &r);
    ok_or_message(ckt_blocked_product(&a, &b, &r, &err), &err, &r);
    ok_or_message(ckt_raked_product(&a, &b, &r, &err), &err, &r);
    ok_or_message(ckt_max_common_layout(&a, &b, &r, &err), &err, &r);
    ok_or_message(ckt_nullspace(&a, &r, &err), &err, &r);
    int64_t v;
    if (ckt_max_common_vector(&a, &b, &v, &err) == CKT_OK) FUZZ_CHECK(v >= 1);
    ckt_tuple tiler;
    if (ckt_make_layout_tv(&a, &b, &tiler, &r, &err) != CKT_OK) FUZZ_CHECK(err.msg[0] != 0);
    if (ckt_local_partition(&a, &b, fz_int(&in), &r, &v, &err) != CKT_OK) FUZZ_CHECK(err.msg[0] != 0);
    ckt_layout tl[2] = {a, b};
    ok_or_message(ckt_logical_divide(&a, ckt_layout_rank(&a) >= 2 ? 2 : 1, tl, &r, &err), &err, &r);
    ckt_layout bt[2] = {b, a};
    int nt = ckt_layout_rank(&a) >= 2 ? 2 : 1;
    ok_or_message(ckt_logical_product_tiler(&a, nt, bt, &r, &err), &err, &r);
    ok_or_message(ckt_zipped_product_tiler(&a, nt, bt, &r, &err), &err, &r);
    ok_or_message(ckt_tiled_product_tiler(&a, nt, bt, &r, &err), &err, &r);
    ok_or_message(ckt_flat_product(&a, nt, bt, &r, &err), &err, &r);
    return 0;
}
