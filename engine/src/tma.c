/* Tensor maps of Hopper's bulk tensor copies from ckt layouts (see ckt/tma.h): the driver's
 * parameters read off the global layout and the LDS tile's layout, the LDS tile checked element
 * by element against where the copy writes, and the encode call through the CUDA driver loaded at
 * run time (the dynlib.c pattern of the runtimes). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ckt/tma.h"
#include "dynlib.h"

static int data_type(ckt_dtype d)
{
    switch (d) {
    case CKT_F16: return 6;
    case CKT_BF16: return 9;
    case CKT_F32: return 7;
    case CKT_F64: return 8;
    case CKT_I32: return 3;
    case CKT_I64: return 5;
    case CKT_U8:
    case CKT_I8:
    case CKT_E4M3:
    case CKT_E5M2: return 0; /* bytes: the copy moves the 8-bit floats' bits */
    }
    return -1;
}

static int log2i(int64_t x)
{
    int n = 0;
    while (x > 1) x >>= 1, n++;
    return n;
}

/* size and stride of a flat mode; -1 size when the mode is hierarchical */
static ckt_status flat_mode(const ckt_layout *l, int i, const char *what, int64_t *size,
                            int64_t *stride, ckt_error *err)
{
    ckt_layout m;
    ckt_status s = ckt_layout_mode(l, i, &m, err);
    if (s) return s;
    if (!ckt_tuple_is_int(&m.shape))
        return ckt_fail(
            err, CKT_EINVAL,
            "tma: mode %d of the %s is hierarchical; a tensor map's dimensions are flat", i, what);
    *size = m.shape.value[0];
    *stride = m.stride.value[0];
    return CKT_OK;
}

/* the byte the copy writes element e of the box to, from a start aligned to the swizzle's
 * repeat: the swizzle XORs address bits 7.. into bits 4.. (Sw<B,4,3> on bytes) */
static int64_t copy_address(int64_t start, int64_t e, int64_t esz, int swizzle_bytes)
{
    int64_t a = start + e * esz;
    return swizzle_bytes ? a ^ (((a >> 7) & (swizzle_bytes / 16 - 1)) << 4) : a;
}

static ckt_status copy_swizzle(const ckt_swizzle *sw, int64_t esz, int *bytes, ckt_error *err)
{
    *bytes = 0;
    if (!sw || sw->b == 0) return CKT_OK;
    if (sw->s != 3 || sw->m + log2i(esz) != 4 || sw->b < 1 || sw->b > 3)
        return ckt_fail(err, CKT_EINVAL,
                        "tma: the LDS swizzle Sw<%d,%d,%d> on %lld-byte elements is not one of the "
                        "copy's swizzles Sw<1..3,%d,3> (32B, 64B, 128B)",
                        sw->b, sw->m, sw->s, (long long)esz, 4 - log2i(esz));
    *bytes = 16 << sw->b;
    return CKT_OK;
}

static ckt_status check_lds(const ckt_layout *lds, const ckt_swizzle *sw, const ckt_tma_map *t,
                            const int *order, int64_t esz, ckt_error *err)
{
    int64_t total = (int64_t)t->box_bytes / esz;
    if (total > ((int64_t)1 << 22))
        return ckt_fail(err, CKT_EINVAL, "tma: a box of %lld elements is larger than any LDS",
                        (long long)total);
    int64_t shape[CKT_TMA_MAX_RANK];
    for (int i = 0; i < t->rank; i++) {
        ckt_layout m;
        ckt_status s = ckt_layout_mode(lds, i, &m, err);
        if (s) return s;
        shape[i] = ckt_layout_size(&m);
    }
    for (int64_t e = 0; e < total; e++) {
        /* e: the box's row-major index (innermost dimension fastest), as the copy writes it */
        int64_t c[CKT_TMA_MAX_RANK], rest = e, idx = 0, mul = 1;
        for (int d = 0; d < t->rank; d++) {
            c[order[d]] = rest % t->box_dim[d];
            rest /= t->box_dim[d];
        }
        for (int i = 0; i < t->rank; i++)
            idx += c[i] * mul, mul *= shape[i]; /* the ckt coordinate, colexicographic */
        int64_t off, want = copy_address(0, e, esz, t->swizzle_bytes);
        ckt_status s = ckt_layout_eval(lds, idx, &off, err);
        if (s) return s;
        if (sw) off = ckt_swizzle_apply(*sw, off);
        if (off * esz != want)
            return ckt_fail(err, CKT_EINVAL,
                            "tma: box element %lld lands at byte %lld of the LDS tile, but its "
                            "layout puts it at byte %lld: the tile must be the box "
                            "row by row (innermost dimension contiguous)%s",
                            (long long)e, (long long)want, (long long)(off * esz),
                            t->swizzle_bytes ? " under the copy's swizzle" : "");
    }
    return CKT_OK;
}

ckt_status ckt_tma_plan(const ckt_layout *global, ckt_dtype dtype, const ckt_layout *lds,
                        const ckt_swizzle *sw, ckt_tma_map *out, ckt_error *err)
{
    return ckt_tma_plan_ex(global, dtype, lds, sw, NULL, true, out, err);
}

ckt_status ckt_tma_plan_ex(const ckt_layout *global, ckt_dtype dtype, const ckt_layout *lds,
                           const ckt_swizzle *sw, const int *dims, bool check_tile,
                           ckt_tma_map *out, ckt_error *err)
{
    if (!global || !lds || !out) return ckt_fail(err, CKT_EINVAL, "tma: NULL argument");
    memset(out, 0, sizeof *out);
    int rank = ckt_tuple_rank(&global->shape), dt = data_type(dtype);
    if (dt < 0)
        return ckt_fail(err, CKT_EUNSUPPORTED, "tma: dtype %s has no tensor-map element type",
                        ckt_dtype_name(dtype) ? ckt_dtype_name(dtype) : "?");
    if (rank < 1 || rank > CKT_TMA_MAX_RANK)
        return ckt_fail(err, CKT_EINVAL,
                        "tma: the global tensor has rank %d; a tensor map has 1..5", rank);
    if (ckt_tuple_rank(&lds->shape) != rank)
        return ckt_fail(err, CKT_EINVAL,
                        "tma: the LDS tile has rank %d but the global tensor %d (mode i of the box "
                        "is mode i of the tensor)",
                        ckt_tuple_rank(&lds->shape), rank);
    if (sw && sw->b == 0) sw = NULL;
    int64_t esz = (int64_t)ckt_dtype_size(dtype), size[CKT_TMA_MAX_RANK], stride[CKT_TMA_MAX_RANK];
    int inner = -1;
    ckt_status s;
    for (int i = 0; i < rank; i++) {
        if ((s = flat_mode(global, i, "global tensor", &size[i], &stride[i], err))) return s;
        if (size[i] < 1 || size[i] > ((int64_t)1 << 32))
            return ckt_fail(err, CKT_EINVAL, "tma: global dimension %d has size %lld (1..2^32)", i,
                            (long long)size[i]);
        if (stride[i] == 1 && inner < 0) inner = i;
    }
    if (inner < 0)
        return ckt_fail(err, CKT_EINVAL,
                        "tma: no mode of the global tensor has stride 1 (the innermost dimension "
                        "of a tensor map is contiguous)");
    /* dimension order: the one given, or the contiguous mode, then the others by increasing
     * stride */
    int order[CKT_TMA_MAX_RANK], n = 0;
    bool used[CKT_TMA_MAX_RANK] = {false};
    if (dims) {
        for (int d = 0; d < rank; d++) {
            if (dims[d] < 0 || dims[d] >= rank || used[dims[d]])
                return ckt_fail(err, CKT_EINVAL,
                                "tma: the dimension order is not a permutation of the %d modes",
                                rank);
            used[dims[d]] = true;
            order[d] = dims[d];
        }
        if (stride[order[0]] != 1)
            return ckt_fail(err, CKT_EINVAL,
                            "tma: mode %d, the map's innermost dimension, has stride %lld, not 1",
                            order[0], (long long)stride[order[0]]);
        inner = order[0];
        n = rank;
    } else {
        order[n++] = inner;
        used[inner] = true;
    }
    while (n < rank) {
        int best = -1;
        for (int i = 0; i < rank; i++)
            if (!used[i] && (best < 0 || stride[i] < stride[best])) best = i;
        used[best] = true;
        order[n++] = best;
    }
    out->rank = rank;
    out->data_type = dt;
    out->inner = inner;
    out->l2_promotion = 2;
    out->box_bytes = esz;
    for (int d = 0; d < rank; d++) {
        int i = order[d];
        ckt_layout m;
        if ((s = ckt_layout_mode(lds, i, &m, err))) return s;
        int64_t bs = ckt_layout_size(&m);
        if (bs < 1 || bs > 256)
            return ckt_fail(
                err, CKT_EINVAL,
                "tma: the box is %lld along mode %d; a tensor map's box is 1..256 per dimension",
                (long long)bs, i);
        out->global_dim[d] = (uint64_t)size[i];
        out->box_dim[d] = (uint32_t)bs;
        out->element_stride[d] = 1;
        out->box_bytes *= bs;
        if (d > 0) {
            int64_t b = stride[i] * esz;
            if (stride[i] < 1 || b % 16 || b >= ((int64_t)1 << 40))
                return ckt_fail(err, CKT_EINVAL,
                                "tma: mode %d of the global tensor is %lld bytes apart; a tensor "
                                "map's strides are positive multiples of 16 bytes below 2^40",
                                i, (long long)b);
            out->global_stride[d - 1] = (uint64_t)b;
        }
    }
    if ((out->box_dim[0] * esz) % 16)
        return ckt_fail(err, CKT_EINVAL,
                        "tma: the box's innermost extent is %lld bytes, not a multiple of 16",
                        (long long)(out->box_dim[0] * esz));
    if (sw) {
        if ((s = copy_swizzle(sw, esz, &out->swizzle_bytes, err))) return s;
        out->swizzle = sw->b;
        if (out->box_dim[0] * esz > out->swizzle_bytes)
            return ckt_fail(
                err, CKT_EINVAL,
                "tma: the box's innermost extent is %lld bytes, more than the %dB swizzle spans",
                (long long)(out->box_dim[0] * esz), out->swizzle_bytes);
    }
    out->lds_alignment = out->swizzle_bytes ? 8 * out->swizzle_bytes : 128;
    return check_tile ? check_lds(lds, sw, out, order, esz, err) : CKT_OK;
}

typedef int (*encode_fn)(void *, int, uint32_t, void *, const uint64_t *, const uint64_t *,
                         const uint32_t *, const uint32_t *, int, int, int, int);

ckt_status ckt_tma_encode(const ckt_tma_map *m, const void *global_address, void *out,
                          ckt_error *err)
{
    if (!m || !out || !global_address) return ckt_fail(err, CKT_EINVAL, "tma: NULL argument");
    if ((uintptr_t)global_address % 16)
        return ckt_fail(err, CKT_EINVAL, "tma: the global address is not 16-byte aligned");
    if ((uintptr_t)out % 64)
        return ckt_fail(err, CKT_EINVAL, "tma: the tensor map's storage is not 64-byte aligned");
    static const char *const names[] = {"libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
                                        "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so",
                                        NULL};
    /* launches may come from several threads (autotune's pool): the driver symbol is bound once */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static encode_fn bound;
    pthread_mutex_lock(&lock);
    if (!bound) {
        const char *opened;
        void *lib = ckt_dynlib_open(names, "cuTensorMapEncodeTiled", &opened);
        const ckt_dynsym sym = {(void **)&bound, "cuTensorMapEncodeTiled", NULL, false};
        if (lib && ckt_dynlib_bind(lib, &sym, 1)) bound = NULL;
    }
    encode_fn fn = bound;
    pthread_mutex_unlock(&lock);
    if (!fn)
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "tma: no CUDA driver with cuTensorMapEncodeTiled here (libcuda.so.1; a "
                        "CUDA 12+ driver)");
    int r =
        fn(out, m->data_type, (uint32_t)m->rank, (void *)(uintptr_t)global_address, m->global_dim,
           m->global_stride, m->box_dim, m->element_stride, 0, m->swizzle, m->l2_promotion, 0);
    if (r)
        return ckt_fail(err, CKT_ERUNTIME, "tma: cuTensorMapEncodeTiled failed (CUresult %d)", r);
    return CKT_OK;
}

ckt_status ckt_tma_check_tile(const ckt_layout *lds, const ckt_swizzle *sw, ckt_dtype dtype,
                              int64_t base, int64_t repeat, const int64_t origin[2],
                              const int64_t box[2], int inner, int *swizzle_bytes, ckt_error *err)
{
    if (!lds || !origin || !box || !swizzle_bytes)
        return ckt_fail(err, CKT_EINVAL, "tma: NULL argument");
    if (ckt_tuple_rank(&lds->shape) != 2 || (inner != 0 && inner != 1))
        return ckt_fail(err, CKT_EINVAL, "tma: a copy's LDS tile is rank 2 (this one has %d)",
                        ckt_tuple_rank(&lds->shape));
    int64_t esz = (int64_t)ckt_dtype_size(dtype), shape[2];
    ckt_status s = copy_swizzle(sw, esz, swizzle_bytes, err);
    if (s) return s;
    for (int i = 0; i < 2; i++) {
        ckt_layout m;
        if ((s = ckt_layout_mode(lds, i, &m, err))) return s;
        shape[i] = ckt_layout_size(&m);
        if (box[i] < 1 || box[i] > 256 || origin[i] < 0 || origin[i] + box[i] > shape[i])
            return ckt_fail(err, CKT_EINVAL,
                            "tma: the box is %lld along mode %d at %lld (1..256 per dimension, "
                            "inside the LDS tile's %lld)",
                            (long long)box[i], i, (long long)origin[i], (long long)shape[i]);
    }
    int W = *swizzle_bytes, outer = 1 - inner;
    if (box[inner] * esz % 16 || (W && box[inner] * esz > W))
        return ckt_fail(err, CKT_EINVAL,
                        "tma: the box's contiguous extent is %lld bytes: a multiple of 16%s",
                        (long long)(box[inner] * esz), W ? ", at most the swizzle's span" : "");
    int64_t align = W ? 8 * W : 128, start = 0;
    for (int64_t e = 0; e < box[0] * box[1]; e++) {
        int64_t c[2], off;
        c[inner] = origin[inner] + e % box[inner];
        c[outer] = origin[outer] + e / box[inner];
        if ((s = ckt_layout_eval(lds, c[0] + shape[0] * c[1], &off, err))) return s;
        if (sw && sw->b) off = ckt_swizzle_apply(*sw, off);
        int64_t at = base + off * esz;
        if (e == 0) {
            start = at;
            if (start % align)
                return ckt_fail(err, CKT_EINVAL,
                                "tma: the tile starts at LDS byte %lld; a copy%s starts on a "
                                "%lld-byte boundary",
                                (long long)start, W ? " with a swizzle" : "", (long long)align);
            if (repeat % align)
                return ckt_fail(err, CKT_EINVAL,
                                "tma: the tile's stages are %lld bytes apart, not a multiple of "
                                "%lld: a copy%s starts on a %lld-byte boundary in every stage",
                                (long long)repeat, (long long)align, W ? " with a swizzle" : "",
                                (long long)align);
        }
        if (at != copy_address(start, e, esz, W))
            return ckt_fail(err, CKT_EINVAL,
                            "tma: box element (%lld, %lld) is at LDS byte %lld, but the copy "
                            "writes it to byte %lld: the tile must be the box row by row (mode %d "
                            "innermost)%s",
                            (long long)(c[0] - origin[0]), (long long)(c[1] - origin[1]),
                            (long long)at, (long long)copy_address(start, e, esz, W), inner,
                            W ? " under the copy's swizzle" : "");
    }
    return CKT_OK;
}

_Static_assert(sizeof(ckt_tma_cpu_map) <= 128, "a tensor-map argument is 128 bytes");

ckt_status ckt_tma_cpu_encode(const ckt_tma_map *m, ckt_dtype dtype, const void *global_address,
                              void *out, ckt_error *err)
{
    if (!m || !out || !global_address) return ckt_fail(err, CKT_EINVAL, "tma: NULL argument");
    ckt_tma_cpu_map c;
    memset(&c, 0, sizeof c);
    c.base = global_address;
    c.rank = m->rank;
    c.elem_bytes = (int32_t)ckt_dtype_size(dtype);
    for (int d = 0; d < m->rank; d++) {
        c.dim[d] = m->global_dim[d];
        c.box[d] = m->box_dim[d];
        if (d) c.stride[d - 1] = m->global_stride[d - 1];
    }
    c.swizzle_bytes = m->swizzle_bytes;
    memset(out, 0, 128);
    memcpy(out, &c, sizeof c);
    return CKT_OK;
}
