/* Encodings, 2D patterns and nested layouts from arbitrary bytes: a valid result is
 * consistent (calculate_index agrees with the TV layout), anything else is a clear error. */
#include <string.h>

#include "ckt/ckt.h"
#include "ckt/distribution.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size};
    ckt_error err;
    err.msg[0] = 0;
    ckt_pattern_2d p = {fz_int(&in), fz_int(&in), fz_int(&in), fz_int(&in), fz_int(&in), fz_int(&in), (ckt_pattern_kind)(fz_u8(&in) % 5)};
    ckt_encoding e;
    if (ckt_encoding_pattern_2d(&p, &e, &err) != CKT_OK) FUZZ_CHECK(err.msg[0] != 0);
    ckt_encoding_desc d;
    memset(&d, 0, sizeof d);
    d.nr = fz_u8(&in) % 3;
    for (int i = 0; i < d.nr; i++) d.rs[i] = fz_int(&in);
    d.nx = fz_u8(&in) % 4;
    for (int x = 0; x < d.nx; x++) {
        d.nh[x] = fz_u8(&in) % 4;
        for (int k = 0; k < d.nh[x]; k++) d.hs[x][k] = fz_int(&in);
    }
    d.np = fz_u8(&in) % 3;
    for (int q = 0; q < d.np; q++) {
        d.np_comp[q] = fz_u8(&in) % 4;
        for (int j = 0; j < d.np_comp[q]; j++) { d.p_major[q][j] = (int)fz_int(&in); d.p_minor[q][j] = (int)fz_int(&in); }
    }
    d.ny = fz_u8(&in) % 5;
    for (int y = 0; y < d.ny; y++) { d.y_major[y] = (int)fz_int(&in); d.y_minor[y] = (int)fz_int(&in); }
    if (ckt_encoding_make(&d, &e, &err) == CKT_OK) {
        ckt_layout tv;
        if (ckt_encoding_tv_layout(&e, &tv, &err) == CKT_OK && ckt_encoding_num_threads(&e) <= 4096) {
            int64_t ys[CKT_DIST_MAX_Y] = {0}, xs[CKT_DIST_MAX_X];
            FUZZ_CHECK(ckt_encoding_calculate_index(&e, ckt_encoding_num_threads(&e) - 1, ys, xs, &err) == CKT_OK);
        }
    } else {
        FUZZ_CHECK(err.msg[0] != 0);
    }
    ckt_nested n;
    memset(&n, 0, sizeof n);
    n.rank = fz_u8(&in) % 4;
    for (int i = 0; i < n.rank; i++) {
        n.subgroup_tile[i] = fz_int(&in); n.batch_tile[i] = fz_int(&in); n.outer_tile[i] = fz_int(&in);
        n.thread_tile[i] = fz_int(&in); n.element_tile[i] = fz_int(&in);
        n.subgroup_strides[i] = fz_int(&in); n.thread_strides[i] = fz_int(&in);
    }
    ckt_nested m;
    if (ckt_nested_make(&n, &m, &err) == CKT_OK) {
        ckt_layout tv;
        int64_t sg = 1 + fz_u8(&in) % 64;
        if (ckt_nested_tv_layout(&m, sg, &tv, &err) != CKT_OK) FUZZ_CHECK(err.msg[0] != 0);
        if (ckt_nested_values_per_thread(&m) <= 4096) {
            static int64_t coords[4096 * CKT_NESTED_MAX_RANK];
            if (ckt_nested_elements(&m, fz_int(&in), sg, coords, &err) != CKT_OK) FUZZ_CHECK(err.msg[0] != 0);
        }
    } else {
        FUZZ_CHECK(err.msg[0] != 0);
    }
    return 0;
}
