/* Tensor maps of Hopper's bulk tensor copies from ckt layouts (ckt/tma.h): the parameters
 * cuTensorMapEncodeTiled takes, against hand-worked cases (the CUDA driver API's rules), the LDS
 * tile checked against where the copy writes, refusals naming the rule, and the encode call
 * (skipped without a CUDA driver, as on the development machines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "ckt/tma.h"

static ckt_layout L(const char *text)
{
    ckt_layout l;
    ckt_error err;
    if (ckt_layout_parse(text, &l, &err)) fail_msg("%s: %s", text, err.msg);
    return l;
}

static void expect_refused(const char *global, ckt_dtype dt, const char *lds, int b, int m, int s,
                           ckt_status want, const char *msg)
{
    ckt_layout g = L(global), t = L(lds);
    ckt_swizzle sw = {b, m, s};
    ckt_tma_map map;
    ckt_error err;
    assert_int_equal(ckt_tma_plan(&g, dt, &t, b ? &sw : NULL, &map, &err), want);
    if (!strstr(err.msg, msg)) fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg);
}

static void k_major_tile_128b(void **state)
{
    (void)state;
    /* A, 4096 x 4096 f16 row-major; the 128 x 64 K-major tile with the 128B swizzle (the sm_90a
     * GEMM's) */
    ckt_layout g = L("(4096,4096):(4096,1)"), t = L("(128,64):(64,1)");
    ckt_swizzle sw = {3, 3, 3};
    ckt_tma_map m;
    ckt_error err;
    assert_int_equal(ckt_tma_plan(&g, CKT_F16, &t, &sw, &m, &err), CKT_OK);
    assert_int_equal(m.rank, 2);
    assert_int_equal(m.data_type, 6);
    assert_int_equal(m.inner, 1);
    assert_true(m.global_dim[0] == 4096 && m.global_dim[1] == 4096);
    assert_true(m.global_stride[0] == 8192);
    assert_true(m.box_dim[0] == 64 && m.box_dim[1] == 128);
    assert_true(m.element_stride[0] == 1 && m.element_stride[1] == 1);
    assert_int_equal(m.swizzle, 3);
    assert_int_equal(m.swizzle_bytes, 128);
    assert_int_equal(m.box_bytes, 16384);
    assert_int_equal(m.lds_alignment, 1024);
    /* bf16, a non-square tensor, the 64B swizzle over 32-wide K tiles */
    g = L("(1000,264):(264,1)");
    t = L("(64,32):(32,1)");
    sw = (ckt_swizzle){2, 3, 3};
    assert_int_equal(ckt_tma_plan(&g, CKT_BF16, &t, &sw, &m, &err), CKT_OK);
    assert_int_equal(m.data_type, 9);
    assert_true(m.global_dim[0] == 264 && m.global_dim[1] == 1000 && m.global_stride[0] == 528);
    assert_int_equal(m.swizzle, 2);
    assert_int_equal(m.lds_alignment, 512);
}

static void mn_major_and_plain(void **state)
{
    (void)state;
    /* B as (n, k) stored K x N row-major (N contiguous): the innermost dimension is mode 0; one
     * 64-row atom of the M/N-major 128B layout per copy */
    ckt_layout g = L("(2048,512):(1,2048)"), t = L("(64,64):(1,64)");
    ckt_swizzle sw = {3, 3, 3};
    ckt_tma_map m;
    ckt_error err;
    assert_int_equal(ckt_tma_plan(&g, CKT_F16, &t, &sw, &m, &err), CKT_OK);
    assert_int_equal(m.inner, 0);
    assert_true(m.global_dim[0] == 2048 && m.global_dim[1] == 512 && m.global_stride[0] == 4096);
    assert_true(m.box_dim[0] == 64 && m.box_dim[1] == 64);
    /* no swizzle, f32, rank 3 (a batch): dimensions by increasing stride after the contiguous one
     */
    g = L("(8,100,64):(6400,64,1)");
    t = L("(1,16,32):(512,32,1)");
    assert_int_equal(ckt_tma_plan(&g, CKT_F32, &t, NULL, &m, &err), CKT_OK);
    assert_int_equal(m.rank, 3);
    assert_true(m.global_dim[0] == 64 && m.global_dim[1] == 100 && m.global_dim[2] == 8);
    assert_true(m.global_stride[0] == 256 && m.global_stride[1] == 25600);
    assert_true(m.box_dim[0] == 32 && m.box_dim[1] == 16 && m.box_dim[2] == 1);
    assert_int_equal(m.swizzle, 0);
    assert_int_equal(m.lds_alignment, 128);
}

static void refusals(void **state)
{
    (void)state;
    expect_refused("(4096,4100):(4100,1)", CKT_F16, "(128,64):(64,1)", 3, 3, 3, CKT_EINVAL,
                   "multiples of 16 bytes");
    expect_refused("(4096,4096):(4096,1)", CKT_F16, "(512,64):(64,1)", 3, 3, 3, CKT_EINVAL,
                   "1..256");
    expect_refused("(4096,4096):(4096,1)", CKT_F16, "(128,128):(128,1)", 3, 3, 3, CKT_EINVAL,
                   "more than the 128B swizzle");
    expect_refused("(4096,4096):(4096,1)", CKT_F16, "(128,4):(4,1)", 0, 0, 0, CKT_EINVAL,
                   "multiple of 16");
    /* a padded tile (CK's remedy) is not what the copy writes */
    expect_refused("(4096,4096):(4096,1)", CKT_F16, "(128,64):(72,1)", 0, 0, 0, CKT_EINVAL,
                   "row by row");
    /* the byte-address form of the 128B swizzle given on f16 elements */
    expect_refused("(4096,4096):(4096,1)", CKT_F16, "(128,64):(64,1)", 3, 4, 3, CKT_EINVAL,
                   "not one of the copy's swizzles");
    expect_refused("(4096,4096):(4096,2)", CKT_F16, "(128,64):(64,1)", 0, 0, 0, CKT_EINVAL,
                   "stride 1");
    expect_refused("((64,64),4096):((4096,262144),1)", CKT_F16, "(128,64):(64,1)", 0, 0, 0,
                   CKT_EINVAL, "hierarchical");
    expect_refused("(4096,4096):(4096,1)", CKT_F16, "(2,128,64):(8192,64,1)", 0, 0, 0, CKT_EINVAL,
                   "rank 3");
    expect_refused("(1,2,3,4,5,6):(720,360,120,30,6,1)", CKT_F16, "(1,1,1,1,1,8):(8,8,8,8,8,1)", 0,
                   0, 0, CKT_EINVAL, "rank 6");
    ckt_tma_map m;
    ckt_error err;
    ckt_layout g = L("(64,64):(64,1)");
    assert_int_equal(ckt_tma_plan(NULL, CKT_F16, &g, NULL, &m, &err), CKT_EINVAL);
    assert_int_equal(ckt_tma_plan(&g, CKT_F16, NULL, NULL, &m, &err), CKT_EINVAL);
}

static void encode_needs_the_driver(void **state)
{
    (void)state;
    ckt_layout g = L("(256,256):(256,1)"), t = L("(128,64):(64,1)");
    ckt_swizzle sw = {3, 3, 3};
    ckt_tma_map m;
    ckt_error err;
    assert_int_equal(ckt_tma_plan(&g, CKT_F16, &t, &sw, &m, &err), CKT_OK);
    _Alignas(64) unsigned char map[128];
    memset(map, 0, sizeof map);
    static _Alignas(16) uint16_t tensor[256 * 256];
    ckt_status s = ckt_tma_encode(&m, tensor, map, &err);
    if (s == CKT_EUNSUPPORTED) { /* no CUDA driver here: the call is refused, not crashed */
        if (!strstr(err.msg, "driver")) fail_msg("%s", err.msg);
    } else {
        assert_int_equal(s, CKT_OK); /* a host pointer is a valid global address for the encoder */
        int nonzero = 0;
        for (int i = 0; i < 128; i++) nonzero |= map[i];
        assert_true(nonzero);
    }
    assert_int_equal(ckt_tma_encode(&m, (const char *)tensor + 8, map, &err), CKT_EINVAL);
    assert_int_equal(ckt_tma_encode(&m, tensor, map + 16, &err), CKT_EINVAL);
    assert_int_equal(ckt_tma_encode(NULL, tensor, map, &err), CKT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(k_major_tile_128b),
        cmocka_unit_test(mn_major_and_plain),
        cmocka_unit_test(refusals),
        cmocka_unit_test(encode_needs_the_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
