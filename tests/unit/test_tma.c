/* Tensor maps of Hopper's bulk tensor copies from ckt layouts (ckt/tma.h): the parameters
 * cuTensorMapEncodeTiled takes, against hand-worked cases (the CUDA driver API's rules), the LDS
 * tile checked against where the copy writes, refusals naming the rule, and the encode call
 * (skipped without a CUDA driver, as on the development machines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ckt_tma_check_tile on `lds` (swizzle Sw<b,m,s>, b = 0: none), returning the copy's swizzle in
 * bytes through *W */
static ckt_status tile(const char *lds, int b, int m, int s, ckt_dtype dt, int64_t base,
                       int64_t repeat, int64_t o0, int64_t o1, int64_t b0, int64_t b1, int inner,
                       int *W, ckt_error *err)
{
    ckt_layout t = L(lds);
    ckt_swizzle sw = {b, m, s};
    const int64_t origin[2] = {o0, o1}, box[2] = {b0, b1};
    *W = -1;
    return ckt_tma_check_tile(&t, b ? &sw : NULL, dt, base, repeat, origin, box, inner, W, err);
}

static void expect_tile(const char *lds, int b, int m, int s, ckt_dtype dt, int64_t base,
                        int64_t repeat, int64_t o0, int64_t o1, int64_t b0, int64_t b1, int inner,
                        int want_W)
{
    int W;
    ckt_error err;
    if (tile(lds, b, m, s, dt, base, repeat, o0, o1, b0, b1, inner, &W, &err))
        fail_msg("%s Sw<%d,%d,%d> at %lld: %s", lds, b, m, s, (long long)base, err.msg);
    assert_int_equal(W, want_W);
}

static void expect_tile_refused(const char *lds, int b, int m, int s, ckt_dtype dt, int64_t base,
                                int64_t repeat, int64_t o0, int64_t o1, int64_t b0, int64_t b1,
                                int inner, const char *msg)
{
    int W;
    ckt_error err;
    assert_int_equal(tile(lds, b, m, s, dt, base, repeat, o0, o1, b0, b1, inner, &W, &err),
                     CKT_EINVAL);
    if (!strstr(err.msg, msg)) fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg);
}

static void check_tile_accepts(void **state)
{
    (void)state;
    /* 128B: 64 rows of 64 f16 (128 bytes), Sw<3,3,3> on elements = Sw<3,4,3> on bytes; the
     * whole tile, then its second half (rows 64..127 start at byte 8192 = 8 atoms of 1024) in a
     * tile at LDS byte 1024 with stages 16384 bytes apart, then one 8-row atom (rows 8..15) */
    expect_tile("(64,64):(64,1)", 3, 3, 3, CKT_F16, 0, 0, 0, 0, 64, 64, 1, 128);
    expect_tile("(128,64):(64,1)", 3, 3, 3, CKT_F16, 1024, 16384, 64, 0, 64, 64, 1, 128);
    expect_tile("(128,64):(64,1)", 3, 3, 3, CKT_F16, 1024, 16384, 8, 0, 8, 64, 1, 128);
    /* 64B: rows of 32 bf16, the atom 8 x 64 = 512 bytes */
    expect_tile("(32,32):(32,1)", 2, 3, 3, CKT_BF16, 512, 2048, 0, 0, 32, 32, 1, 64);
    expect_tile("(32,32):(32,1)", 2, 3, 3, CKT_BF16, 0, 0, 24, 0, 8, 32, 1, 64);
    /* 32B: rows of 16 f16, the atom 8 x 32 = 256 bytes */
    expect_tile("(16,16):(16,1)", 1, 3, 3, CKT_F16, 256, 512, 0, 0, 16, 16, 1, 32);
    /* 4-byte elements: Sw<3,2,3> (128B) on f32, Sw<1,2,3> (32B); bytes: Sw<2,4,3> (64B) on i8 */
    expect_tile("(8,32):(32,1)", 3, 2, 3, CKT_F32, 0, 0, 0, 0, 8, 32, 1, 128);
    expect_tile("(8,8):(8,1)", 1, 2, 3, CKT_F32, 0, 0, 0, 0, 8, 8, 1, 32);
    expect_tile("(16,64):(64,1)", 2, 4, 3, CKT_I8, 0, 0, 0, 0, 16, 64, 1, 64);
    /* mode 0 contiguous (an M/N-major tile): one 64-row atom of the 128B swizzle, 8 columns, and
     * the second atom of a 128-row tile */
    expect_tile("(64,8):(1,64)", 3, 3, 3, CKT_F16, 0, 0, 0, 0, 64, 8, 0, 128);
    expect_tile("((64,2),8):((1,512),64)", 3, 3, 3, CKT_F16, 0, 0, 64, 0, 64, 8, 0, 128);
    /* no swizzle: 48-byte rows; rows 16..31 of a 32 x 8 tile start at byte 256 (128-aligned) */
    expect_tile("(16,24):(24,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 16, 24, 1, 0);
    expect_tile("(32,8):(8,1)", 0, 0, 0, CKT_F16, 128, 512, 16, 0, 16, 8, 1, 0);
    /* a swizzle of b = 0 is none */
    expect_tile("(16,24):(24,1)", 0, 3, 3, CKT_F16, 0, 0, 0, 0, 16, 24, 1, 0);
}

static void check_tile_refusals(void **state)
{
    (void)state;
    /* off the 8 x span boundary: the tile at byte 512 under 128B; rows 4.. of an atom; a 64B tile
     * at byte 256 */
    expect_tile_refused("(64,64):(64,1)", 3, 3, 3, CKT_F16, 512, 0, 0, 0, 64, 64, 1,
                        "the tile starts at LDS byte 512; a copy with a swizzle starts on a "
                        "1024-byte boundary");
    expect_tile_refused("(16,64):(64,1)", 3, 3, 3, CKT_F16, 0, 0, 4, 0, 8, 64, 1,
                        "1024-byte boundary");
    expect_tile_refused("(32,32):(32,1)", 2, 3, 3, CKT_BF16, 256, 0, 0, 0, 32, 32, 1,
                        "512-byte boundary");
    /* no swizzle: 128-byte boundary (rows 1.. of 48-byte rows start at byte 48) */
    expect_tile_refused("(16,24):(24,1)", 0, 0, 0, CKT_F16, 0, 0, 1, 0, 8, 24, 1,
                        "the tile starts at LDS byte 48; a copy starts on a 128-byte boundary");
    /* stages not a multiple of the boundary apart: the spacing and the multiple named */
    expect_tile_refused("(4,64):(64,1)", 3, 3, 3, CKT_F16, 0, 512, 0, 0, 4, 64, 1,
                        "tma: the tile's stages are 512 bytes apart, not a multiple of 1024: a "
                        "copy with a swizzle starts on a 1024-byte boundary in every stage");
    expect_tile_refused("(16,24):(24,1)", 0, 0, 0, CKT_F16, 0, 768 + 64, 0, 0, 16, 24, 1,
                        "tma: the tile's stages are 832 bytes apart, not a multiple of 128: a "
                        "copy starts on a 128-byte boundary in every stage");
    expect_tile_refused("(32,32):(32,1)", 2, 3, 3, CKT_BF16, 512, 2048 + 256, 0, 0, 32, 32, 1,
                        "stages are 2304 bytes apart, not a multiple of 512");
    /* both off: the start is named first */
    expect_tile_refused("(4,64):(64,1)", 3, 3, 3, CKT_F16, 512, 512, 0, 0, 4, 64, 1,
                        "tma: the tile starts at LDS byte 512; a copy with a swizzle starts on a "
                        "1024-byte boundary");
    /* the wrong major: a row-major tile copied with mode 0 contiguous, and the reverse */
    expect_tile_refused("(16,64):(64,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 16, 64, 0,
                        "box element (1, 0) is at LDS byte 128, but the copy writes it to byte 2: "
                        "the tile must be the box row by row (mode 0 innermost)");
    expect_tile_refused("(64,8):(1,64)", 3, 3, 3, CKT_F16, 0, 0, 0, 0, 64, 8, 1,
                        "box element (0, 1) is at LDS byte 144, but the copy writes it to byte 2: "
                        "the tile must be the box row by row (mode 1 innermost) under the copy's "
                        "swizzle");
    expect_tile_refused("(64,16):(1,64)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 64, 16, 1,
                        "box element (0, 1) is at LDS byte 128, but the copy writes it to byte 2");
    /* padded rows */
    expect_tile_refused("(16,64):(72,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 16, 64, 1,
                        "box element (1, 0) is at LDS byte 144, but the copy writes it to byte "
                        "128: the tile must be the box row by row (mode 1 innermost)");
    /* a 128B swizzle over 64-byte rows is not the copy's 64B swizzle of them */
    expect_tile_refused("(8,64):(64,1)", 3, 3, 3, CKT_F16, 0, 0, 0, 0, 8, 32, 1,
                        "under the copy's swizzle");
    /* the contiguous extent: 8 bytes; 24 bytes; 128 bytes under 64B; 64 bytes under 32B */
    expect_tile_refused("(16,4):(4,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 16, 4, 1,
                        "the box's contiguous extent is 8 bytes: a multiple of 16");
    expect_tile_refused("(16,12):(12,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 16, 12, 1,
                        "contiguous extent is 24 bytes");
    expect_tile_refused("(16,64):(64,1)", 2, 3, 3, CKT_F16, 0, 0, 0, 0, 16, 64, 1,
                        "the box's contiguous extent is 128 bytes: a multiple of 16, at most the "
                        "swizzle's span");
    expect_tile_refused("(16,32):(32,1)", 1, 3, 3, CKT_F16, 0, 0, 0, 0, 16, 32, 1,
                        "contiguous extent is 64 bytes: a multiple of 16, at most the swizzle's");
    /* swizzles that are not the copy's: bytes' Sw<3,4,3> on f16; f16's Sw<3,3,3> on f32; S 2 */
    expect_tile_refused("(16,64):(64,1)", 3, 4, 3, CKT_F16, 0, 0, 0, 0, 16, 64, 1,
                        "the LDS swizzle Sw<3,4,3> on 2-byte elements is not one of the copy's "
                        "swizzles Sw<1..3,3,3>");
    expect_tile_refused("(8,32):(32,1)", 3, 3, 3, CKT_F32, 0, 0, 0, 0, 8, 32, 1, "Sw<1..3,2,3>");
    expect_tile_refused("(16,64):(64,1)", 3, 3, 2, CKT_F16, 0, 0, 0, 0, 16, 64, 1,
                        "not one of the copy's swizzles");
    /* the box: past the tile, 0, more than 256 */
    expect_tile_refused("(64,64):(64,1)", 3, 3, 3, CKT_F16, 0, 0, 60, 0, 8, 64, 1,
                        "the box is 8 along mode 0 at 60 (1..256 per dimension, inside the LDS "
                        "tile's 64)");
    expect_tile_refused("(64,64):(64,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 0, 64, 1, "1..256");
    expect_tile_refused("(512,8):(8,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 512, 8, 1,
                        "the box is 512 along mode 0");
    expect_tile_refused("(64,64):(64,1)", 0, 0, 0, CKT_F16, 0, 0, -8, 0, 8, 64, 1, "at -8");
    /* rank 2 only, inner 0 or 1 */
    expect_tile_refused("(2,16,64):(1024,64,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 16, 64, 1,
                        "a copy's LDS tile is rank 2 (this one has 3)");
    expect_tile_refused("(16,64):(64,1)", 0, 0, 0, CKT_F16, 0, 0, 0, 0, 16, 64, 2, "rank 2");
    ckt_layout t = L("(16,64):(64,1)");
    const int64_t origin[2] = {0, 0}, box[2] = {16, 64};
    int W;
    ckt_error err;
    assert_int_equal(ckt_tma_check_tile(NULL, NULL, CKT_F16, 0, 0, origin, box, 1, &W, &err),
                     CKT_EINVAL);
    assert_int_equal(ckt_tma_check_tile(&t, NULL, CKT_F16, 0, 0, NULL, box, 1, &W, &err),
                     CKT_EINVAL);
    assert_int_equal(ckt_tma_check_tile(&t, NULL, CKT_F16, 0, 0, origin, NULL, 1, &W, &err),
                     CKT_EINVAL);
    assert_int_equal(ckt_tma_check_tile(&t, NULL, CKT_F16, 0, 0, origin, box, 1, NULL, &err),
                     CKT_EINVAL);
}

/* The rows x 64 f16 global tensor over pointer parameter `ptr` (rows: an expression), contiguous
 * along its 64 columns, and a rows x 64 f16 LDS tile under the 128B swizzle: the tensors the kernel
 * tests below copy between. */
static int global_by_64(ckt_kernel *k, int ptr, ckt_expr_id rows)
{
    ckt_error err;
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    int g;
    ckt_expr_id shape[2] = {rows, ckt_expr_int(ex, 64)};
    ckt_expr_id stride[2] = {ckt_expr_int(ex, 64), ckt_expr_int(ex, 1)};
    assert_int_equal(ckt_kernel_global(k, ptr, CKT_F16, 2, shape, stride, true, &g, &err), CKT_OK);
    return g;
}

/* the parameters those tests share: X (const f16 pointer), then M (i32, at least 1) */
static void x_and_m(ckt_kernel *k, int *x, int *m)
{
    ckt_error err;
    assert_int_equal(ckt_kernel_param_ptr(k, "X", CKT_F16, true, 16, x, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_scalar(k, "M", CKT_PARAM_I32, false, 0, 0, 1, m, &err),
                     CKT_OK);
}

static int lds_by_64(ckt_kernel *k, const char *layout)
{
    ckt_error err;
    ckt_layout l = L(layout);
    ckt_swizzle sw = {3, 3, 3};
    int s;
    assert_int_equal(ckt_kernel_lds(k, CKT_F16, &l, &sw, &s, &err), CKT_OK);
    return s;
}

/* ckt_kernel_tma_store from C: bad arguments refused naming the rule, a store and its wait
 * emitted for sm_90a (thread 0 issues, commits; the kernel's end waits for a store not waited
 * for), refused for a target without bulk stores. */
static void kernel_store(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    int x, y, m, gx, gy, s, wx, wy, ws;
    assert_int_equal(ckt_kernel_create("bulk_store", 64, &k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    assert_int_equal(ckt_kernel_param_ptr(k, "X", CKT_F16, true, 16, &x, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_ptr(k, "Y", CKT_F16, false, 16, &y, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_scalar(k, "M", CKT_PARAM_I32, false, 0, 0, 1, &m, &err),
                     CKT_OK);
    gx = global_by_64(k, x, ckt_kernel_param(k, m)->expr);
    gy = global_by_64(k, y, ckt_kernel_param(k, m)->expr);
    s = lds_by_64(k, "(16,64):(64,1)");
    const int64_t len[2] = {16, 64};
    ckt_expr_id zero[2] = {ckt_expr_int(ex, 0), ckt_expr_int(ex, 0)};
    ckt_expr_id row[2] = {ckt_expr_mulc(ex, ckt_expr_bid(ex, 0), 16), ckt_expr_int(ex, 0)};
    assert_int_equal(ckt_kernel_window_make(k, gx, 2, len, row, &wx, &err), CKT_OK);
    assert_int_equal(ckt_kernel_window_make(k, gy, 2, len, row, &wy, &err), CKT_OK);
    assert_int_equal(ckt_kernel_window_make(k, s, 2, len, zero, &ws, &err), CKT_OK);
    assert_int_equal(ckt_kernel_tma_store(NULL, wy, ws, true, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_tma_store(k, 99, ws, true, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no such window"));
    assert_int_equal(ckt_kernel_tma_store(k, ws, wy, true, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "stores a window of an LDS tensor"));
    assert_int_equal(ckt_kernel_tma_store(k, wx, ws, true, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "'X' is read-only"));
    assert_int_equal(ckt_kernel_tma_store(k, wy, ws, false, &err), CKT_OK);
    assert_int_equal(ckt_kernel_tma_store_wait(k, &err), CKT_OK);
    assert_int_equal(ckt_kernel_tma_store(k, wy, ws, false, &err), CKT_OK);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    char *src = NULL;
    assert_int_equal(ckt_emit_named(k, "sm_90a", &src, &err), CKT_OK);
    const char *st = strstr(src, "ckt_tma_store_2d(&");
    assert_non_null(st);
    assert_non_null(strstr(st, "ckt_bulk_commit();"));
    assert_non_null(strstr(src, "if (tid == 0) ckt_bulk_read_wait();")); /* the explicit wait */
    const char *last = strstr(strstr(st + 1, "ckt_tma_store_2d(&"), "ckt_bulk_read_wait();");
    assert_non_null(last); /* the kernel's end waits for the second store */
    free(src);
    src = NULL;
    assert_int_equal(ckt_emit_named(k, "gfx90a", &src, &err), CKT_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "tma_store: target 'gfx90a' has no bulk tensor copies"));
    free(src);
    ckt_kernel_destroy(k);
}

/* Thread-block clusters: a box shared by the cluster (each block copying its part into all of
 * them) and stages released in every block; the emitted CUDA and C forms; the refusals. */
static void kernel_cluster(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    int x, m, gx, s, wx, ws, full, empty, bad;
    assert_int_equal(ckt_kernel_cluster(NULL, 2, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_create("clustered", 128, &k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    assert_int_equal(ckt_kernel_cluster_size(k), 1);
    assert_int_equal(ckt_kernel_cluster(k, 3, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "cluster: 3 blocks a cluster (2, 4 or 8)"));
    assert_int_equal(ckt_kernel_cluster(k, 0, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_cluster(k, -2, &err), CKT_EINVAL);
    x_and_m(k, &x, &m);
    gx = global_by_64(k, x, ckt_kernel_param(k, m)->expr);
    s = lds_by_64(k, "(64,64):(64,1)");
    const int64_t len[2] = {64, 64};
    ckt_expr_id zero[2] = {ckt_expr_int(ex, 0), ckt_expr_int(ex, 0)};
    /* the box's rows from the cluster's index: the same in each block of it */
    ckt_expr_id row[2] = {
        ckt_expr_mulc(ex, ckt_expr_binary(ex, CKT_E_DIV, ckt_expr_bid(ex, 0), ckt_expr_int(ex, 2)),
                      64),
        ckt_expr_int(ex, 0)};
    assert_int_equal(ckt_kernel_window_make(k, gx, 2, len, row, &wx, &err), CKT_OK);
    assert_int_equal(ckt_kernel_window_make(k, s, 2, len, zero, &ws, &err), CKT_OK);
    assert_int_equal(ckt_kernel_mbarriers(k, 1, 1, &full, &err), CKT_OK);
    assert_int_equal(ckt_kernel_mbarriers(k, 1, 16, &empty, &err), CKT_OK);
    assert_int_equal(ckt_kernel_mbarriers(k, 1, 128, &bad, &err), CKT_OK);
    ckt_expr_id b0 = ckt_expr_int(ex, 0);
    /* no cluster yet: neither a multicast nor an arrival in the cluster */
    assert_int_equal(ckt_kernel_tma_copy_multicast(k, ws, wx, full, b0, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "multicast needs a cluster of blocks"));
    assert_int_equal(ckt_kernel_mbar_arrive_cluster(k, empty, b0, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "needs a cluster of blocks"));
    assert_int_equal(ckt_kernel_cluster(k, 4, &err), CKT_OK);
    assert_int_equal(ckt_kernel_cluster(k, 2, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "the kernel has one already"));
    assert_int_equal(ckt_kernel_cluster_size(k), 4);
    /* four blocks of 4 warps: 16 arrivals a phase, not the block's 128 threads */
    assert_int_equal(ckt_kernel_mbar_arrive_cluster(k, bad, b0, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "expects 128 arrivals a phase, not 16"));
    assert_int_equal(ckt_kernel_mbar_arrive_cluster(k, empty, b0, &err), CKT_OK);
    assert_int_equal(ckt_kernel_tma_copy_multicast(k, ws, wx, full, b0, &err), CKT_OK);
    assert_int_equal(ckt_kernel_cluster(k, 2, &err), CKT_EINVAL); /* (after operations) */
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    char *src = NULL;
    assert_int_equal(ckt_emit_named(k, "sm_90a", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "__cluster_dims__(4, 1, 1) __launch_bounds__(128) clustered("));
    assert_non_null(strstr(src, "ckt_cluster_sync();"));
    assert_non_null(strstr(src, "ckt_mbar_expect_tx(ckt_bar, 8192);")); /* the whole box */
    /* part r: 16 of the 64 rows, 2048 bytes apart in LDS, into all four blocks */
    assert_non_null(strstr(src, "+ ckt_rank * 2048u, &ckt_tmap0, (int)(w0_1), (int)((w0_0) + "
                                "(int)ckt_rank * 16), ckt_bar, 0xf);"));
    assert_non_null(strstr(src, "ckt_mbar_arrive_cluster(ckt_smem_addr(ckt_lds) + "));
    assert_int_equal(ckt_kernel_tma(k, 0)->box[1], 16);
    free(src);
    src = NULL;
    assert_int_equal(ckt_emit_named(k, "cpu:sm_90a", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "}, 4, ckt_lds, ")); /* the four parts land in this block */
    assert_non_null(strstr(src, "(long long)(0), 16); /* each warp of each block"));
    free(src);
    src = NULL;
    assert_int_equal(ckt_emit_named(k, "gfx90a", &src, &err), CKT_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "clusters of blocks: target 'gfx90a' has none"));
    free(src);
    ckt_kernel_destroy(k);

    /* a box whose parts would not be whole swizzle periods: 8 rows of 128 bytes in 8 parts */
    assert_int_equal(ckt_kernel_create("clustered2", 64, &k, &err), CKT_OK);
    ex = ckt_kernel_exprs(k);
    assert_int_equal(ckt_kernel_cluster(k, 8, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_ptr(k, "X", CKT_F16, true, 16, &x, &err), CKT_OK);
    gx = global_by_64(k, x, ckt_expr_int(ex, 64));
    s = lds_by_64(k, "(8,64):(64,1)");
    const int64_t len8[2] = {8, 64};
    ckt_expr_id z2[2] = {ckt_expr_int(ex, 0), ckt_expr_int(ex, 0)};
    assert_int_equal(ckt_kernel_window_make(k, gx, 2, len8, z2, &wx, &err), CKT_OK);
    assert_int_equal(ckt_kernel_window_make(k, s, 2, len8, z2, &ws, &err), CKT_OK);
    assert_int_equal(ckt_kernel_mbarriers(k, 1, 1, &full, &err), CKT_OK);
    assert_int_equal(ckt_kernel_tma_copy_multicast(k, ws, wx, full, ckt_expr_int(ex, 0), &err),
                     CKT_EINVAL);
    assert_non_null(strstr(err.msg, "splits into 8 parts of whole 1024-byte swizzle periods"));
    ckt_kernel_destroy(k);
}

/* A clipped copy (ckt_kernel_tma_copy_clipped): its own tensor map, whose rows are
 * min(box, the tensor's extent) as an expression, and the CUDA transaction count from it. */
static void kernel_clipped(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    int x, m, gx, s, wx, ws, full;
    assert_int_equal(ckt_kernel_tma_copy_clipped(NULL, 0, 0, 0, 0, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_create("clipped", 128, &k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    x_and_m(k, &x, &m);
    gx = global_by_64(k, x, ckt_kernel_param(k, m)->expr);
    s = lds_by_64(k, "(64,64):(64,1)");
    const int64_t len[2] = {64, 64};
    ckt_expr_id zero[2] = {ckt_expr_int(ex, 0), ckt_expr_int(ex, 0)};
    assert_int_equal(ckt_kernel_window_make(k, gx, 2, len, zero, &wx, &err), CKT_OK);
    assert_int_equal(ckt_kernel_window_make(k, s, 2, len, zero, &ws, &err), CKT_OK);
    assert_int_equal(ckt_kernel_mbarriers(k, 1, 2, &full, &err), CKT_OK);
    ckt_expr_id b0 = ckt_expr_int(ex, 0);
    assert_int_equal(ckt_kernel_tma_copy_clipped(k, ws, 99, full, b0, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no such window"));
    assert_int_equal(ckt_kernel_tma_copy_clipped(k, ws, wx, full, b0, &err), CKT_OK);
    assert_int_equal(ckt_kernel_tma_copy(k, ws, wx, full, b0, &err), CKT_OK);
    assert_int_equal(ckt_kernel_mbar_wait(k, full, b0, b0, &err), CKT_OK);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    assert_int_equal(ckt_kernel_ntmas(k), 2); /* clipped and whole: two maps */
    assert_int_not_equal(ckt_kernel_tma(k, 0)->rows, CKT_EXPR_NONE);
    assert_int_equal(ckt_kernel_tma(k, 1)->rows, CKT_EXPR_NONE);
    int64_t pv[CKT_EXPR_MAX_LEAVES], values[CKT_K_MAX_PARAMS] = {0}, rows;
    ckt_expr_env env;
    memset(&env, 0, sizeof env);
    env.params = pv;
    for (int64_t M = 1; M <= 200; M += 13) {
        values[m] = M;
        ckt_kernel_param_leaves(k, values, pv);
        assert_int_equal(ckt_expr_eval_int(ckt_kernel_exprs_const(k), ckt_kernel_tma(k, 0)->rows,
                                           &env, &rows, &err),
                         CKT_OK);
        assert_int_equal(rows, M < 64 ? M : 64);
    }
    char *src = NULL;
    assert_int_equal(ckt_emit_named(k, "sm_90a", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "ckt_mbar_expect_tx(ckt_bar, (ckt_u32)(ckt_imin(64, M)) * 128u);"));
    assert_non_null(strstr(src, "ckt_mbar_expect_tx(ckt_bar, 8192);"));
    free(src);
    ckt_kernel_destroy(k);

    /* an extent whose expression prints too long for the emitter is refused, not cut short */
    assert_int_equal(ckt_kernel_create("clipped_long", 128, &k, &err), CKT_OK);
    ex = ckt_kernel_exprs(k);
    x_and_m(k, &x, &m);
    ckt_expr_id long_rows = ckt_expr_int(ex, 1), mexpr = ckt_kernel_param(k, m)->expr;
    for (int i = 0; i < 60; i++)
        long_rows =
            ckt_expr_add(ex, long_rows,
                         ckt_expr_binary(ex, CKT_E_MOD, mexpr, ckt_expr_int(ex, 1000003 + 2 * i)));
    gx = global_by_64(k, x, long_rows);
    s = lds_by_64(k, "(64,64):(64,1)");
    ckt_expr_id z[2] = {ckt_expr_int(ex, 0), ckt_expr_int(ex, 0)};
    assert_int_equal(ckt_kernel_window_make(k, gx, 2, len, z, &wx, &err), CKT_OK);
    assert_int_equal(ckt_kernel_window_make(k, s, 2, len, z, &ws, &err), CKT_OK);
    assert_int_equal(ckt_kernel_mbarriers(k, 1, 1, &full, &err), CKT_OK);
    assert_int_equal(ckt_kernel_tma_copy_clipped(k, ws, wx, full, ckt_expr_int(ex, 0), &err),
                     CKT_OK);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    src = NULL;
    assert_int_equal(ckt_emit_named(k, "sm_90a", &src, &err), CKT_ECAPACITY);
    assert_non_null(strstr(err.msg, "the clipped box's rows"));
    free(src);
    ckt_kernel_destroy(k);
}

/* One atomic add for the block (ckt_kernel_atomic_add): the emitted forms and the refusals. */
static void kernel_atomic(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k;
    int c, f, r, m, gc, gf, gr, g2;
    ckt_expr_id old;
    assert_int_equal(ckt_kernel_atomic_add(NULL, 0, 0, 1, &old, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_create("counted", 64, &k, &err), CKT_OK);
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    assert_int_equal(ckt_kernel_param_ptr(k, "counters", CKT_I32, false, 16, &c, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_ptr(k, "F", CKT_F32, false, 16, &f, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_ptr(k, "R", CKT_I32, true, 16, &r, &err), CKT_OK);
    assert_int_equal(ckt_kernel_param_scalar(k, "M", CKT_PARAM_I32, false, 0, 0, 1, &m, &err),
                     CKT_OK);
    ckt_expr_id shape[2] = {ckt_kernel_param(k, m)->expr, ckt_expr_int(ex, 4)};
    ckt_expr_id stride[2] = {ckt_expr_int(ex, 1), ckt_expr_int(ex, 1)};
    assert_int_equal(ckt_kernel_global(k, c, CKT_I32, 1, shape, stride, true, &gc, &err), CKT_OK);
    assert_int_equal(ckt_kernel_global(k, f, CKT_F32, 1, shape, stride, true, &gf, &err), CKT_OK);
    assert_int_equal(ckt_kernel_global(k, r, CKT_I32, 1, shape, stride, true, &gr, &err), CKT_OK);
    ckt_expr_id stride2[2] = {ckt_expr_int(ex, 4), ckt_expr_int(ex, 1)};
    assert_int_equal(ckt_kernel_global(k, c, CKT_I32, 2, shape, stride2, true, &g2, &err), CKT_OK);
    ckt_expr_id zero = ckt_expr_int(ex, 0);
    assert_int_equal(ckt_kernel_atomic_add(k, gc, zero, 1, NULL, &err), CKT_EINVAL);
    assert_int_equal(ckt_kernel_atomic_add(k, 99, zero, 1, &old, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "no such tensor"));
    assert_int_equal(ckt_kernel_atomic_add(k, gf, zero, 1, &old, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "is not a rank-1 global i32 tensor"));
    assert_int_equal(ckt_kernel_atomic_add(k, g2, zero, 1, &old, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "is not a rank-1 global i32 tensor"));
    assert_int_equal(ckt_kernel_atomic_add(k, gr, zero, 1, &old, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "'R' is read-only"));
    assert_int_equal(ckt_kernel_atomic_add(k, gc, ckt_expr_tid(ex), 1, &old, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "block-uniform integer"));
    assert_int_equal(ckt_kernel_atomic_add(k, gc, zero, (int64_t)1 << 31, &old, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "outside the i32 range"));
    assert_int_equal(ckt_kernel_atomic_add(k, gc, zero, INT32_MIN, &old, &err), CKT_OK);
    assert_int_equal(
        ckt_kernel_if(k, ckt_expr_binary(ex, CKT_E_LT, ckt_expr_tid(ex), ckt_expr_int(ex, 5)),
                      &err),
        CKT_OK);
    assert_int_equal(ckt_kernel_atomic_add(k, gc, zero, 1, &old, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "depends on the thread id"));
    assert_int_equal(ckt_kernel_end(k, &err), CKT_OK);
    /* the add in a branch on its result: the block's threads agree on it */
    assert_int_equal(ckt_kernel_atomic_add(k, gc, ckt_kernel_param(k, m)->expr, 1, &old, &err),
                     CKT_OK);
    assert_int_equal(
        ckt_kernel_if(k, ckt_expr_binary(ex, CKT_E_EQ, old, ckt_expr_int(ex, 2)), &err), CKT_OK);
    assert_int_equal(ckt_kernel_atomic_add(k, gc, zero, -3, &old, &err), CKT_OK);
    assert_int_equal(ckt_kernel_end(k, &err), CKT_OK);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    char *src = NULL;
    assert_int_equal(ckt_emit_named(k, "sm_90", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "if (tid == 0) ckt_atomic_old = M > 0 ? atomicAdd(&counters["));
    assert_non_null(strstr(src, "__threadfence(); /* later reads after the add */"));
    free(src);
    src = NULL;
    assert_int_equal(ckt_emit_named(k, "gfx90a", &src, &err), CKT_OK); /* (HIP: the same) */
    assert_non_null(strstr(src, "atomicAdd(&counters["));
    free(src);
    src = NULL;
    assert_int_equal(ckt_emit_named(k, "cpu", &src, &err), CKT_OK);
    assert_non_null(strstr(src, "__atomic_fetch_add(&counters["));
    free(src);
    ckt_kernel_destroy(k);
}

/* The builder's LDS placement: a tensor under a hardware swizzle starts on the swizzle's
 * 8 x span boundary and its stages lie a multiple of it apart, wherever it was declared; mbarrier
 * sets take their LDS after every tensor when the kernel is finished, so a tensor declared after
 * them is placed as if they were not there; other tensors keep 16-byte alignment. */
static int lds_tensor(ckt_kernel *k, ckt_dtype dt, const char *layout, int b, int m, int64_t stages)
{
    ckt_layout l = L(layout);
    ckt_swizzle sw = {b, m, 3};
    ckt_error err;
    int t;
    if (ckt_kernel_lds(k, dt, &l, b ? &sw : NULL, &t, &err)) fail_msg("%s: %s", layout, err.msg);
    if (stages > 1 && ckt_kernel_lds_stages(k, t, stages, &err))
        fail_msg("%s stages: %s", layout, err.msg);
    return t;
}

static void lds_placement(void **state)
{
    (void)state;
    ckt_kernel *k;
    ckt_error err;
    int set0, set1;
    assert_int_equal(ckt_kernel_create("place", 64, &k, &err), CKT_OK);
    /* mbarriers first (16 bytes), then a 128B-swizzled f16 tile: at 0, not at 16 */
    assert_int_equal(ckt_kernel_mbarriers(k, 2, 1, &set0, &err), CKT_OK);
    int a = lds_tensor(k, CKT_F16, "(16,64):(64,1)", 3, 3, 1);
    assert_int_equal(ckt_kernel_tensor(k, a)->lds_offset, 0);
    /* 24 unswizzled bytes at 2048, then a 64B-swizzled bf16 ring (32 rows of 64 bytes, 2048
     * bytes a stage) on the next 512-byte boundary */
    int c = lds_tensor(k, CKT_F16, "(12):(1)", 0, 0, 1);
    assert_int_equal(ckt_kernel_tensor(k, c)->lds_offset, 2048);
    int d = lds_tensor(k, CKT_BF16, "(32,32):(32,1)", 2, 3, 2);
    assert_int_equal(ckt_kernel_tensor(k, d)->lds_offset, 2560);
    assert_int_equal(ckt_kernel_tensor(k, d)->stage_elems * 2, 2048);
    /* an unswizzled tensor after it: the next 16 bytes; after more mbarriers, a 128B-swizzled
     * f16 ring of 512-byte tiles on the next 1024-byte boundary, its stages 1024 bytes apart */
    int e = lds_tensor(k, CKT_F32, "(3):(1)", 0, 0, 1);
    assert_int_equal(ckt_kernel_tensor(k, e)->lds_offset, 2560 + 4096);
    assert_int_equal(ckt_kernel_mbarriers(k, 3, 64, &set1, &err), CKT_OK);
    int f = lds_tensor(k, CKT_F16, "(4,64):(64,1)", 3, 3, 2);
    assert_int_equal(ckt_kernel_tensor(k, f)->lds_offset, 7168);
    assert_int_equal(ckt_kernel_tensor(k, f)->stage_elems * 2, 1024);
    /* a swizzle no copy or wgmma takes (Sw<3,4,3> on f16) keeps the 16-byte alignment */
    int g = lds_tensor(k, CKT_F16, "(8,8):(8,1)", 3, 4, 1);
    assert_int_equal(ckt_kernel_tensor(k, g)->lds_offset, 7168 + 1024 + 512);
    /* not placed before the kernel is finished; then after the tensors, in order */
    assert_int_equal(ckt_kernel_mbar(k, set0)->lds_offset, -1);
    int64_t tensors_end = ckt_kernel_lds_bytes(k);
    assert_int_equal(ckt_kernel_finish(k, &err), CKT_OK);
    assert_int_equal(ckt_kernel_mbar(k, set0)->lds_offset, (tensors_end + 7) / 8 * 8);
    assert_int_equal(ckt_kernel_mbar(k, set1)->lds_offset,
                     ckt_kernel_mbar(k, set0)->lds_offset + 16);
    assert_int_equal(ckt_kernel_lds_bytes(k), ckt_kernel_mbar(k, set1)->lds_offset + 24);
    ckt_kernel_destroy(k);
}

static void cpu_encode_fields(void **state)
{
    (void)state;
    /* bf16, 100 x 264 row-major, 64 x 32 boxes under the 64B swizzle */
    ckt_layout g = L("(100,264):(264,1)"), t = L("(64,32):(32,1)");
    ckt_swizzle sw = {2, 3, 3};
    ckt_tma_map m;
    ckt_error err;
    assert_int_equal(ckt_tma_plan(&g, CKT_BF16, &t, &sw, &m, &err), CKT_OK);
    static _Alignas(16) uint16_t tensor[100 * 264];
    _Alignas(64) unsigned char out[128];
    memset(out, 0xab, sizeof out);
    assert_int_equal(ckt_tma_cpu_encode(&m, CKT_BF16, tensor, out, &err), CKT_OK);
    ckt_tma_cpu_map c;
    memcpy(&c, out, sizeof c);
    assert_ptr_equal(c.base, tensor);
    assert_int_equal(c.rank, 2);
    assert_int_equal(c.elem_bytes, 2);
    assert_true(c.dim[0] == 264 && c.dim[1] == 100);
    assert_true(c.stride[0] == 528);
    assert_true(c.box[0] == 32 && c.box[1] == 64);
    assert_int_equal(c.swizzle_bytes, 64);
    /* the unused dimensions and the rest of the 128 bytes are zero */
    for (int d = 2; d < CKT_TMA_MAX_RANK; d++) assert_true(c.dim[d] == 0 && c.box[d] == 0);
    for (int d = 1; d < CKT_TMA_MAX_RANK - 1; d++) assert_true(c.stride[d] == 0);
    for (size_t i = sizeof c; i < sizeof out; i++) assert_int_equal(out[i], 0);

    /* f32, rank 3 (a batch), M/N-major-free: dimensions innermost first, no swizzle */
    g = L("(8,100,64):(6400,64,1)");
    t = L("(1,16,32):(512,32,1)");
    assert_int_equal(ckt_tma_plan(&g, CKT_F32, &t, NULL, &m, &err), CKT_OK);
    static _Alignas(16) float batch[8 * 100 * 64];
    memset(out, 0xab, sizeof out);
    assert_int_equal(ckt_tma_cpu_encode(&m, CKT_F32, batch, out, &err), CKT_OK);
    memcpy(&c, out, sizeof c);
    assert_ptr_equal(c.base, batch);
    assert_int_equal(c.rank, 3);
    assert_int_equal(c.elem_bytes, 4);
    assert_true(c.dim[0] == 64 && c.dim[1] == 100 && c.dim[2] == 8);
    assert_true(c.stride[0] == 256 && c.stride[1] == 25600);
    assert_true(c.box[0] == 32 && c.box[1] == 16 && c.box[2] == 1);
    assert_int_equal(c.swizzle_bytes, 0);

    /* the copy's 128B swizzle of an i8 tile; M-major f16 (mode 0 contiguous) */
    g = L("(64,4096):(4096,1)");
    t = L("(16,128):(128,1)");
    sw = (ckt_swizzle){3, 4, 3};
    assert_int_equal(ckt_tma_plan(&g, CKT_I8, &t, &sw, &m, &err), CKT_OK);
    assert_int_equal(ckt_tma_cpu_encode(&m, CKT_I8, batch, out, &err), CKT_OK);
    memcpy(&c, out, sizeof c);
    assert_int_equal(c.elem_bytes, 1);
    assert_int_equal(c.swizzle_bytes, 128);
    assert_true(c.dim[0] == 4096 && c.dim[1] == 64 && c.stride[0] == 4096);
    assert_true(c.box[0] == 128 && c.box[1] == 16);
    g = L("(200,48):(1,200)");
    t = L("(64,8):(1,64)");
    sw = (ckt_swizzle){3, 3, 3};
    assert_int_equal(ckt_tma_plan(&g, CKT_F16, &t, &sw, &m, &err), CKT_OK);
    assert_int_equal(ckt_tma_cpu_encode(&m, CKT_F16, batch, out, &err), CKT_OK);
    memcpy(&c, out, sizeof c);
    assert_true(c.dim[0] == 200 && c.dim[1] == 48 && c.stride[0] == 400);
    assert_true(c.box[0] == 64 && c.box[1] == 8);

    assert_int_equal(ckt_tma_cpu_encode(NULL, CKT_F16, batch, out, &err), CKT_EINVAL);
    assert_int_equal(ckt_tma_cpu_encode(&m, CKT_F16, NULL, out, &err), CKT_EINVAL);
    assert_int_equal(ckt_tma_cpu_encode(&m, CKT_F16, batch, NULL, &err), CKT_EINVAL);
}

/* ckt_tma_plan_ex with the dimension order given (what a kernel fixes when it is built): the
 * modes in that order whatever their strides, e.g. BSHD keys (b, s, h, d) as (d, s, h, b), which
 * by increasing stride would be (d, h, s, b); an order that is no permutation, or whose first mode
 * is not contiguous, is refused */
static void plan_in_a_given_order(void **state)
{
    (void)state;
    /* K of BSHD, B = 2, S = 100, H = 4, D = 64 (f16): strides (25600, 256, 64, 1) */
    ckt_layout g = L("(2,100,4,64):(25600,256,64,1)"), box = L("(1,32,1,64):(2048,64,2048,1)");
    ckt_swizzle sw = {3, 3, 3};
    const int order[4] = {3, 1, 2, 0};
    ckt_tma_map m;
    ckt_error err;
    assert_int_equal(ckt_tma_plan_ex(&g, CKT_F16, &box, &sw, order, true, &m, &err), CKT_OK);
    assert_int_equal(m.rank, 4);
    assert_int_equal(m.inner, 3);
    assert_true(m.global_dim[0] == 64 && m.global_dim[1] == 100 && m.global_dim[2] == 4 &&
                m.global_dim[3] == 2);
    assert_true(m.global_stride[0] == 512 && m.global_stride[1] == 128 &&
                m.global_stride[2] == 51200);
    assert_true(m.box_dim[0] == 64 && m.box_dim[1] == 32 && m.box_dim[2] == 1 && m.box_dim[3] == 1);
    assert_int_equal(m.box_bytes, 64 * 32 * 2);
    /* without an order: by increasing stride, h before s */
    assert_int_equal(ckt_tma_plan_ex(&g, CKT_F16, &box, &sw, NULL, false, &m, &err), CKT_OK);
    assert_true(m.global_dim[1] == 4 && m.global_dim[2] == 100);
    const int twice[4] = {3, 1, 1, 0}, outside[4] = {3, 1, 2, 4}, strided[4] = {1, 3, 2, 0};
    assert_int_equal(ckt_tma_plan_ex(&g, CKT_F16, &box, &sw, twice, true, &m, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "not a permutation of the 4 modes"));
    assert_int_equal(ckt_tma_plan_ex(&g, CKT_F16, &box, &sw, outside, true, &m, &err), CKT_EINVAL);
    assert_non_null(strstr(err.msg, "not a permutation of the 4 modes"));
    assert_int_equal(ckt_tma_plan_ex(&g, CKT_F16, &box, &sw, strided, true, &m, &err), CKT_EINVAL);
    assert_non_null(
        strstr(err.msg, "mode 1, the map's innermost dimension, has stride 256, not 1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(k_major_tile_128b),  cmocka_unit_test(mn_major_and_plain),
        cmocka_unit_test(refusals),           cmocka_unit_test(encode_needs_the_driver),
        cmocka_unit_test(check_tile_accepts), cmocka_unit_test(check_tile_refusals),
        cmocka_unit_test(lds_placement),      cmocka_unit_test(kernel_store),
        cmocka_unit_test(cpu_encode_fields),  cmocka_unit_test(plan_in_a_given_order),
        cmocka_unit_test(kernel_cluster),     cmocka_unit_test(kernel_atomic),
        cmocka_unit_test(kernel_clipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
