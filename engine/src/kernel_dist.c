/* Distributions as the kernel builder uses them: per-thread digits plus per-value offsets
 * (see ckt_dist in ckt/kernel_ir.h). Every constructor verifies its result element by element
 * against the description it came from, so the emitter can trust the digits. */
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "ckt/kernel_ir.h"

void ckt_dist_coord(const ckt_dist *d, int64_t tid, int64_t v, int64_t *coord)
{
    for (int r = 0; r < d->rank; r++) coord[r] = d->vcoord[v][r];
    for (int i = 0; i < d->ndigits; i++) {
        int64_t digit = (tid / d->digit_div[i]) % d->digit_mod[i];
        for (int r = 0; r < d->rank; r++) coord[r] += digit * d->coef[i][r];
    }
}

ckt_status ckt_dist_check(const ckt_dist *d, ckt_error *err)
{
    if (!d) return ckt_fail(err, CKT_EINVAL, "distribution: NULL");
    if (d->rank < 1 || d->rank > CKT_K_MAX_RANK)
        return ckt_fail(err, CKT_EINVAL, "distribution: rank %d outside 1..%d", d->rank,
                        CKT_K_MAX_RANK);
    if (d->threads < 1 || d->threads > CKT_K_MAX_BLOCK)
        return ckt_fail(err, CKT_EINVAL, "distribution: %lld threads outside 1..%d",
                        (long long)d->threads, CKT_K_MAX_BLOCK);
    if (d->nvalues < 1 || d->nvalues > CKT_K_MAX_VALUES)
        return ckt_fail(err, CKT_ECAPACITY, "distribution: %lld values per thread outside 1..%d",
                        (long long)d->nvalues, CKT_K_MAX_VALUES);
    if (d->ndigits < 0 || d->ndigits > CKT_K_MAX_DIGITS)
        return ckt_fail(err, CKT_ECAPACITY, "distribution: too many thread digits");
    for (int i = 0; i < d->ndigits; i++)
        if (d->digit_div[i] < 1 || d->digit_mod[i] < 1)
            return ckt_fail(err, CKT_EINVAL, "distribution: digit %d has a non-positive divisor",
                            i);
    for (int r = 0; r < d->rank; r++)
        if (d->lengths[r] < 1)
            return ckt_fail(err, CKT_EINVAL, "distribution: length %lld of dim %d must be >= 1",
                            (long long)d->lengths[r], r);
    int64_t c[CKT_K_MAX_RANK];
    for (int64_t t = 0; t < d->threads; t++)
        for (int64_t v = 0; v < d->nvalues; v++) {
            ckt_dist_coord(d, t, v, c);
            for (int r = 0; r < d->rank; r++)
                if (c[r] < 0 || c[r] >= d->lengths[r])
                    return ckt_fail(err, CKT_EINVAL,
                                    "distribution: thread %lld value %lld reaches coordinate %lld "
                                    "of dim %d outside the tile length %lld",
                                    (long long)t, (long long)v, (long long)c[r], r,
                                    (long long)d->lengths[r]);
        }
    return CKT_OK;
}

static ckt_status check_lengths(const char *fn, int rank, const int64_t *lengths, int64_t *cells,
                                ckt_error *err)
{
    if (rank < 1 || rank > CKT_K_MAX_RANK)
        return ckt_fail(err, CKT_EINVAL, "%s: tile rank %d outside 1..%d", fn, rank,
                        CKT_K_MAX_RANK);
    if (!lengths) return ckt_fail(err, CKT_EINVAL, "%s: NULL lengths", fn);
    int64_t n = 1;
    for (int r = 0; r < rank; r++) {
        if (lengths[r] < 1)
            return ckt_fail(err, CKT_EINVAL, "%s: tile length %lld of dim %d must be >= 1", fn,
                            (long long)lengths[r], r);
        if (ckt_mul_ovf(n, lengths[r], &n))
            return ckt_fail(err, CKT_EOVERFLOW, "%s: tile size overflows 64 bits", fn);
    }
    *cells = n;
    return CKT_OK;
}

/* A row-major tile offset into per-dim coordinates (non-negative offsets only). */
static void split(int rank, const int64_t *lengths, int64_t off, int64_t *c)
{
    for (int r = rank - 1; r >= 0; r--) {
        c[r] = r ? off % lengths[r] : off;
        off /= lengths[r];
    }
}

ckt_status ckt_dist_from_tv(const ckt_layout *tv, int rank, const int64_t *lengths, ckt_dist *out,
                            ckt_error *err)
{
    int64_t cells;
    ckt_status s;
    if (!tv || !out) return ckt_fail(err, CKT_EINVAL, "distribution: NULL argument");
    if ((s = check_lengths("distribution", rank, lengths, &cells, err))) return s;
    if ((s = ckt_layout_check(tv, err))) return ckt_fail_prefix(err, "distribution: TV layout: ");
    if (ckt_layout_rank(tv) != 2)
        return ckt_fail(err, CKT_EINVAL,
                        "distribution: a TV layout has 2 modes (thread, value), got %d",
                        ckt_layout_rank(tv));
    ckt_layout tm, vm;
    if ((s = ckt_layout_mode(tv, 0, &tm, err)) || (s = ckt_layout_mode(tv, 1, &vm, err))) return s;
    ckt_dist d;
    memset(&d, 0, sizeof d);
    d.rank = rank;
    memcpy(d.lengths, lengths, sizeof(int64_t) * (size_t)rank);
    d.threads = ckt_layout_size(&tm);
    d.nvalues = ckt_layout_size(&vm);
    if (d.threads > CKT_K_MAX_BLOCK)
        return ckt_fail(err, CKT_EINVAL, "distribution: %lld threads exceed the largest block (%d)",
                        (long long)d.threads, CKT_K_MAX_BLOCK);
    if (d.nvalues > CKT_K_MAX_VALUES)
        return ckt_fail(err, CKT_ECAPACITY,
                        "distribution: %lld values per thread exceed the capacity %d (use a "
                        "smaller tile or more threads)",
                        (long long)d.nvalues, CKT_K_MAX_VALUES);
    int64_t shp[CKT_TUPLE_NODES], str[CKT_TUPLE_NODES];
    int n = ckt_tuple_flatten(&tm.shape, shp, CKT_TUPLE_NODES);
    ckt_tuple_flatten(&tm.stride, str, CKT_TUPLE_NODES);
    int64_t div = 1;
    for (int i = 0; i < n; i++) {
        if (shp[i] > 1 && str[i] != 0) {
            if (d.ndigits == CKT_K_MAX_DIGITS)
                return ckt_fail(err, CKT_ECAPACITY, "distribution: more than %d thread digits",
                                CKT_K_MAX_DIGITS);
            if (str[i] < 0)
                return ckt_fail(err, CKT_EINVAL, "distribution: negative thread stride %lld",
                                (long long)str[i]);
            d.digit_div[d.ndigits] = div;
            d.digit_mod[d.ndigits] = shp[i];
            split(rank, lengths, str[i], d.coef[d.ndigits]);
            d.ndigits++;
        }
        div *= shp[i];
    }
    for (int64_t v = 0; v < d.nvalues; v++) {
        int64_t off;
        if ((s = ckt_layout_eval(&vm, v, &off, err))) return s;
        if (off < 0 || off >= cells)
            return ckt_fail(
                err, CKT_EINVAL,
                "distribution: value %lld lies at offset %lld outside the %lld-element tile",
                (long long)v, (long long)off, (long long)cells);
        split(rank, lengths, off, d.vcoord[v]);
    }
    /* the digit form must reproduce the TV layout exactly (a thread stride that carries across
     * a row would not) */
    int64_t c[CKT_K_MAX_RANK];
    for (int64_t t = 0; t < d.threads; t++)
        for (int64_t v = 0; v < d.nvalues; v++) {
            int64_t want, got = 0;
            if ((s = ckt_layout_eval(tv, t + d.threads * v, &want, err))) return s;
            if (want < 0 || want >= cells)
                return ckt_fail(err, CKT_EINVAL,
                                "distribution: thread %lld value %lld lies at offset %lld outside "
                                "the %lld-element tile",
                                (long long)t, (long long)v, (long long)want, (long long)cells);
            ckt_dist_coord(&d, t, v, c);
            for (int r = 0; r < rank; r++) got = got * lengths[r] + c[r];
            bool inside = true;
            for (int r = 0; r < rank; r++) inside = inside && c[r] >= 0 && c[r] < lengths[r];
            if (!inside || got != want)
                return ckt_fail(err, CKT_EINVAL,
                                "distribution: thread %lld value %lld: the TV layout's thread "
                                "strides do not split into per-dimension steps of the tile",
                                (long long)t, (long long)v);
        }
    char buf[80];
    ckt_layout_to_string(tv, buf, sizeof buf);
    snprintf(d.desc, sizeof d.desc, "TV %.80s", buf);
    *out = d;
    return CKT_OK;
}

/* A thread layout of extents T and strides S (a stride of 0 or less divides by 1) is one to one
 * when the coordinates of each thread index t < threads map back to t: the first t that does not,
 * -1 when all do. */
static int64_t unreached_thread(int rank, const int64_t *T, const int64_t *S, int64_t threads)
{
    for (int64_t t = 0; t < threads; t++) {
        int64_t back = 0;
        for (int r = 0; r < rank; r++) back += ((t / (S[r] > 0 ? S[r] : 1)) % T[r]) * S[r];
        if (back != t) return t;
    }
    return -1;
}

ckt_status ckt_dist_from_thread_layout(const ckt_layout *tl, int rank, const int64_t *lengths,
                                       int vector_dim, int64_t spv, const int *access_order,
                                       ckt_dist *out, ckt_error *err)
{
    int64_t cells;
    ckt_status s;
    if (!tl || !out) return ckt_fail(err, CKT_EINVAL, "blockwise_copy: NULL argument");
    if ((s = check_lengths("blockwise_copy", rank, lengths, &cells, err))) return s;
    if ((s = ckt_layout_check(tl, err)))
        return ckt_fail_prefix(err, "blockwise_copy: thread_layout: ");
    if (ckt_layout_rank(tl) != rank)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_copy: thread_layout has rank %d but the tile has rank %d",
                        ckt_layout_rank(tl), rank);
    if (vector_dim < 0 || vector_dim >= rank)
        return ckt_fail(err, CKT_EINVAL, "blockwise_copy: vector_dim %d outside 0..%d", vector_dim,
                        rank - 1);
    if (spv < 1 || spv > 16)
        return ckt_fail(err, CKT_EINVAL, "blockwise_copy: scalar_per_vector %lld outside 1..16",
                        (long long)spv);
    int order[CKT_K_MAX_RANK];
    bool seen[CKT_K_MAX_RANK] = {false};
    for (int i = 0; i < rank; i++) {
        order[i] = access_order ? access_order[i] : i;
        if (order[i] < 0 || order[i] >= rank || seen[order[i]])
            return ckt_fail(err, CKT_EINVAL,
                            "blockwise_copy: access_order must be a permutation of 0..%d",
                            rank - 1);
        seen[order[i]] = true;
    }
    ckt_dist d;
    memset(&d, 0, sizeof d);
    d.rank = rank;
    memcpy(d.lengths, lengths, sizeof(int64_t) * (size_t)rank);
    d.threads = ckt_layout_size(tl);
    if (d.threads > CKT_K_MAX_BLOCK)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_copy: thread_layout has %lld threads, more than %d",
                        (long long)d.threads, CKT_K_MAX_BLOCK);
    int64_t T[CKT_K_MAX_RANK] = {0}, S[CKT_K_MAX_RANK] = {0}, reps[CKT_K_MAX_RANK] = {0};
    for (int r = 0; r < rank; r++) {
        ckt_layout m;
        if ((s = ckt_layout_mode(tl, r, &m, err))) return s;
        if (!ckt_tuple_is_int(&m.shape))
            return ckt_fail(err, CKT_EINVAL,
                            "blockwise_copy: mode %d of thread_layout must be flat", r);
        T[r] = m.shape.value[0];
        S[r] = m.stride.value[0];
        int64_t unit = r == vector_dim ? spv : 1, per;
        if (ckt_mul_ovf(T[r], unit, &per))
            return ckt_fail(err, CKT_EOVERFLOW, "blockwise_copy: overflow");
        if (lengths[r] % per)
            return ckt_fail(err, CKT_EINVAL,
                            "blockwise_copy: tile length %lld of dim %d is not a multiple of %lld "
                            "threads x %lld elements",
                            (long long)lengths[r], r, (long long)T[r], (long long)unit);
        reps[r] = lengths[r] / per;
        if (T[r] > 1) {
            d.digit_div[d.ndigits] = S[r] > 0 ? S[r] : 1;
            d.digit_mod[d.ndigits] = T[r];
            d.coef[d.ndigits][r] = unit;
            d.ndigits++;
        }
    }
    int64_t missed = unreached_thread(rank, T, S, d.threads);
    if (missed >= 0)
        return ckt_fail(err, CKT_EINVAL,
                        "blockwise_copy: thread_layout must map its coordinates one to one onto "
                        "0..%lld (thread %lld is not reached)",
                        (long long)d.threads - 1, (long long)missed);
    int64_t nv = spv;
    for (int r = 0; r < rank; r++)
        if (ckt_mul_ovf(nv, reps[r], &nv) || nv > CKT_K_MAX_VALUES)
            return ckt_fail(err, CKT_ECAPACITY,
                            "blockwise_copy: more than %d values per thread (tile too large for "
                            "the thread layout)",
                            CKT_K_MAX_VALUES);
    d.nvalues = nv;
    /* values: repetitions in access order (first listed slowest), the vector innermost */
    for (int64_t v = 0; v < nv; v++) {
        int64_t rest = v / spv, j = v % spv;
        int64_t rc[CKT_K_MAX_RANK];
        for (int i = rank - 1; i >= 0; i--) {
            int r = order[i];
            rc[r] = rest % reps[r];
            rest /= reps[r];
        }
        for (int r = 0; r < rank; r++) {
            int64_t unit = r == vector_dim ? spv : 1;
            d.vcoord[v][r] = rc[r] * T[r] * unit + (r == vector_dim ? j : 0);
        }
    }
    if ((s = ckt_dist_check(&d, err))) return s;
    char buf[64];
    ckt_layout_to_string(tl, buf, sizeof buf);
    snprintf(d.desc, sizeof d.desc, "threads %.40s, %lld-vectors along dim %d", buf, (long long)spv,
             vector_dim);
    *out = d;
    return CKT_OK;
}

ckt_status ckt_dist_raked_1d(int64_t threads, int64_t per_thread, int64_t repeats, ckt_dist *out,
                             ckt_error *err)
{
    if (!out) return ckt_fail(err, CKT_EINVAL, "distribution: NULL argument");
    if (threads < 1 || threads > CKT_K_MAX_BLOCK)
        return ckt_fail(err, CKT_EINVAL, "distribution: threads %lld outside 1..%d",
                        (long long)threads, CKT_K_MAX_BLOCK);
    if (per_thread < 1 || repeats < 1)
        return ckt_fail(err, CKT_EINVAL, "distribution: per_thread and repeats must be >= 1");
    if (per_thread > CKT_K_MAX_VALUES || repeats > CKT_K_MAX_VALUES ||
        per_thread * repeats > CKT_K_MAX_VALUES)
        return ckt_fail(err, CKT_ECAPACITY, "distribution: %lld x %lld values per thread exceed %d",
                        (long long)per_thread, (long long)repeats, CKT_K_MAX_VALUES);
    ckt_dist d;
    memset(&d, 0, sizeof d);
    d.rank = 1;
    d.threads = threads;
    d.lengths[0] = threads * per_thread * repeats;
    d.nvalues = per_thread * repeats;
    if (threads > 1) {
        d.ndigits = 1;
        d.digit_div[0] = 1;
        d.digit_mod[0] = threads;
        d.coef[0][0] = per_thread;
    }
    for (int64_t r = 0; r < repeats; r++)
        for (int64_t j = 0; j < per_thread; j++)
            d.vcoord[r * per_thread + j][0] = r * threads * per_thread + j;
    snprintf(d.desc, sizeof d.desc, "%lld threads x %lld consecutive, %lld times",
             (long long)threads, (long long)per_thread, (long long)repeats);
    *out = d;
    return CKT_OK;
}

/* The mixed-radix digits of a colexicographic index n over `shape` (the first dim fastest). */
static void colex(int rank, const int64_t *shape, int64_t n, int64_t *c)
{
    for (int r = 0; r < rank; r++) {
        c[r] = n % shape[r];
        n /= shape[r];
    }
}

ckt_status ckt_dist_partition(const ckt_layout *thr, int rank, const int64_t *lengths,
                              const int64_t *val, bool packed, int64_t idx_div, int64_t idx_mod,
                              int64_t block, ckt_dist *out, ckt_error *err)
{
    static const char *const fn = "local_partition";
    int64_t cells;
    ckt_status s;
    if (!thr || !out) return ckt_fail(err, CKT_EINVAL, "%s: NULL argument", fn);
    if ((s = check_lengths(fn, rank, lengths, &cells, err))) return s;
    if ((s = ckt_layout_check(thr, err)))
        return ckt_fail_prefix(err, "local_partition: thr_layout: ");
    if (ckt_layout_rank(thr) != rank)
        return ckt_fail(
            err, CKT_EINVAL,
            "%s: thr_layout has %d modes but the tile has rank %d (one thread mode per tile dim)",
            fn, ckt_layout_rank(thr), rank);
    if (block < 1 || block > CKT_K_MAX_BLOCK)
        return ckt_fail(err, CKT_EINVAL, "%s: block %lld outside 1..%d", fn, (long long)block,
                        CKT_K_MAX_BLOCK);
    if (idx_div < 1 || idx_mod < 0)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: thread index (tid / %lld) %% %lld is not a thread index", fn,
                        (long long)idx_div, (long long)idx_mod);
    int64_t T[CKT_K_MAX_RANK], S[CKT_K_MAX_RANK], V[CKT_K_MAX_RANK], P[CKT_K_MAX_RANK],
        R[CKT_K_MAX_RANK];
    int64_t nthr = ckt_layout_size(thr), vsize = 1;
    for (int r = 0; r < rank; r++) {
        ckt_layout m;
        if ((s = ckt_layout_mode(thr, r, &m, err))) return s;
        if (!ckt_tuple_is_int(&m.shape))
            return ckt_fail(err, CKT_EINVAL,
                            "%s: mode %d of thr_layout must be flat (one extent and one stride)",
                            fn, r);
        T[r] = m.shape.value[0];
        S[r] = m.stride.value[0];
        V[r] = val ? val[r] : 1;
        if (V[r] < 1)
            return ckt_fail(err, CKT_EINVAL, "%s: value block extent %lld of dim %d must be >= 1",
                            fn, (long long)V[r], r);
        if (packed && V[r] != 1)
            return ckt_fail(err, CKT_EINVAL,
                            "%s: a packed partition already gives each thread one contiguous block "
                            "(no value block)",
                            fn);
        int64_t step;
        if (ckt_mul_ovf(T[r], V[r], &step) || lengths[r] % step)
            return ckt_fail(
                err, CKT_EINVAL,
                "%s: tile length %lld of dim %d is not a multiple of %lld threads x %lld values",
                fn, (long long)lengths[r], r, (long long)T[r], (long long)V[r]);
        R[r] = lengths[r] / step;
        P[r] = lengths[r] / T[r];
        vsize *= V[r];
    }
    if (nthr > block)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: thr_layout has %lld threads but the kernel's block only %lld", fn,
                        (long long)nthr, (long long)block);
    int64_t missed = unreached_thread(rank, T, S, nthr);
    if (missed >= 0)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: thr_layout must map its coordinates one to one onto 0..%lld "
                        "(thread index %lld is not reached)",
                        fn, (long long)nthr - 1, (long long)missed);
    ckt_dist d;
    memset(&d, 0, sizeof d);
    d.rank = rank;
    memcpy(d.lengths, lengths, sizeof(int64_t) * (size_t)rank);
    d.nvalues = cells / nthr;
    if (d.nvalues > CKT_K_MAX_VALUES)
        return ckt_fail(
            err, CKT_ECAPACITY,
            "%s: %lld values per thread exceed the capacity %d (a smaller tile or more threads)",
            fn, (long long)d.nvalues, CKT_K_MAX_VALUES);
    /* the thread index: (tid / q) % m; a remainder that never wraps inside the block is none */
    int64_t q = idx_div, m = idx_mod;
    if (m && (block - 1) / q < m) m = 0;
    char ix[64];
    if (q > 1 && m)
        snprintf(ix, sizeof ix, "(tid / %lld) %% %lld", (long long)q, (long long)m);
    else if (m)
        snprintf(ix, sizeof ix, "tid %% %lld", (long long)m);
    else
        snprintf(ix, sizeof ix, q > 1 ? "tid / %lld" : "tid", (long long)q);
    if (m > nthr)
        return ckt_fail(err, CKT_EINVAL,
                        "%s: the thread index %s reaches %lld but thr_layout has only %lld threads",
                        fn, ix, (long long)m - 1, (long long)nthr);
    if (m)
        d.threads = block;
    else
        d.threads = (block - 1) / q < nthr ? block : nthr * q;
    for (int r = 0; r < rank; r++) {
        if (T[r] < 2) continue;
        int64_t div = S[r], mod = T[r];
        if (m) { /* ((tid / q) % m / S) % T as one digit of tid */
            if (m <= div) continue;
            int64_t w = m / div;
            if (m % div || (w < mod ? mod % w : w % mod))
                return ckt_fail(err, CKT_EINVAL,
                                "%s: the thread index %s splits thr_layout's mode %d (extent %lld, "
                                "stride %lld) unevenly",
                                fn, ix, r, (long long)mod, (long long)div);
            if (w < mod) mod = w;
        }
        if (d.ndigits == CKT_K_MAX_DIGITS)
            return ckt_fail(err, CKT_ECAPACITY, "%s: more than %d thread digits", fn,
                            CKT_K_MAX_DIGITS);
        if (ckt_mul_ovf(div, q, &d.digit_div[d.ndigits]))
            return ckt_fail(err, CKT_EOVERFLOW, "%s: thread index divisor overflows", fn);
        d.digit_mod[d.ndigits] = mod;
        d.coef[d.ndigits][r] = packed ? P[r] : V[r];
        d.ndigits++;
    }
    for (int64_t v = 0; v < d.nvalues; v++) {
        int64_t j[CKT_K_MAX_RANK], k[CKT_K_MAX_RANK];
        if (packed) {
            colex(rank, P, v, k);
            for (int r = 0; r < rank; r++) d.vcoord[v][r] = k[r];
        } else {
            colex(rank, V, v % vsize, j);
            colex(rank, R, v / vsize, k);
            for (int r = 0; r < rank; r++) d.vcoord[v][r] = j[r] + k[r] * T[r] * V[r];
        }
    }
    /* the digits must reproduce the definition for every thread and value */
    int64_t got[CKT_K_MAX_RANK];
    for (int64_t t = 0; t < d.threads; t++) {
        int64_t i = t / q;
        if (m) i %= m;
        for (int64_t v = 0; v < d.nvalues; v++) {
            ckt_dist_coord(&d, t, v, got);
            for (int r = 0; r < rank; r++) {
                int64_t c = (i / (S[r] > 0 ? S[r] : 1)) % T[r];
                int64_t want = packed ? c * P[r] + d.vcoord[v][r] : c * V[r] + d.vcoord[v][r];
                if (got[r] != want)
                    return ckt_fail(err, CKT_EINVAL,
                                    "%s: internal: thread %lld value %lld lands at %lld instead of "
                                    "%lld in dim %d",
                                    fn, (long long)t, (long long)v, (long long)got[r],
                                    (long long)want, r);
            }
        }
    }
    if ((s = ckt_dist_check(&d, err))) return s;
    char tb[48], vb[32] = "";
    ckt_layout_to_string(thr, tb, sizeof tb);
    if (vsize > 1) {
        size_t n = (size_t)snprintf(vb, sizeof vb, ", values ");
        for (int r = 0; r < rank && n < sizeof vb; r++)
            n += (size_t)snprintf(vb + n, sizeof vb - n, "%s%lld", r ? "x" : "", (long long)V[r]);
    }
    /* the description is a comment in the source: shortened when long */
    int len = snprintf(d.desc, sizeof d.desc, "%s partition by %s%s%s%s",
                       packed ? "packed" : "interleaved", tb, vb, q > 1 || m ? ", index " : "",
                       q > 1 || m ? ix : "");
    if (len >= (int)sizeof d.desc) memcpy(d.desc + sizeof d.desc - 4, "...", 4);
    *out = d;
    return CKT_OK;
}

/* Vectors of up to 16 bytes along the last dim, threads row-major (the last dim fastest) over
 * as much of the block as the tile divides. */
ckt_status ckt_dist_default_copy(int rank, const int64_t *lengths, size_t elem_bytes, int64_t block,
                                 ckt_dist *out, ckt_error *err)
{
    if (rank < 1 || rank > CKT_K_MAX_RANK || !lengths || !out)
        return ckt_fail(err, CKT_EINVAL, "distribution: rank %d outside 1..%d", rank,
                        CKT_K_MAX_RANK);
    if (elem_bytes < 1 || elem_bytes > 16 || block < 1)
        return ckt_fail(err, CKT_EINVAL, "distribution: element size %zu or block %lld", elem_bytes,
                        (long long)block);
    int64_t spv = 16 / (int64_t)elem_bytes;
    while (spv > 1 && lengths[rank - 1] % spv) spv /= 2;
    int64_t remaining = block, T[CKT_K_MAX_RANK], S[CKT_K_MAX_RANK];
    for (int r = rank - 1; r >= 0; r--) {
        int64_t avail = lengths[r] / (r == rank - 1 ? spv : 1);
        T[r] = ckt_gcd(avail, remaining);
        remaining /= T[r];
    }
    int64_t stride = 1;
    for (int r = rank - 1; r >= 0; r--) {
        S[r] = stride;
        stride *= T[r];
    }
    ckt_layout tl;
    ckt_tuple tshape, tstride;
    ckt_status s;
    if ((s = ckt_tuple_flat(&tshape, rank, T, err)) ||
        (s = ckt_tuple_flat(&tstride, rank, S, err)) ||
        (s = ckt_layout_make(&tl, &tshape, &tstride, err)))
        return s;
    return ckt_dist_from_thread_layout(&tl, rank, lengths, rank - 1, spv, NULL, out, err);
}
