/* The swizzle / padding search of ckt.lds.find_swizzle: try placements of one tile in LDS and keep
 * the cheapest for a given write pattern and read pattern. Swizzles come first because they
 * usually cost no LDS; paddings always do. */
#include <string.h>

#include "checked.h"
#include "ckt/lds.h"

void ckt_lds_search_defaults(ckt_lds_search_opts *o)
{
    o->b_min = 1;
    o->b_max = 4;
    o->m_min = 0;
    o->m_max = 5;
    o->s_min = 1;
    o->s_max = 8;
    o->max_padding_banks = 8;
}

static ckt_status check_opts(const ckt_lds_search_opts *o, ckt_error *err)
{
    if (o->b_min < 1 || o->b_max < o->b_min || o->b_max > 8)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.find_swizzle: B range [%d, %d] must satisfy 1 <= min <= max <= 8",
                        o->b_min, o->b_max);
    if (o->m_min < 0 || o->m_max < o->m_min || o->m_max > 16)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.find_swizzle: M range [%d, %d] must satisfy 0 <= min <= max <= 16",
                        o->m_min, o->m_max);
    if (o->s_min < 1 || o->s_max < o->s_min || o->s_max > 16)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.find_swizzle: S range [%d, %d] must satisfy 1 <= min <= max <= 16",
                        o->s_min, o->s_max);
    if (o->max_padding_banks < 0 || o->max_padding_banks > 1024)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.find_swizzle: max_padding_banks %d must be in [0, 1024]",
                        o->max_padding_banks);
    return CKT_OK;
}

/* Better = conflict-free before not; among conflict-free, less LDS then fewer cycles; otherwise
 * fewer cycles then less LDS. Ties keep the earlier (simpler) candidate. */
static bool better(const ckt_lds_choice *a, int64_t a_cycles, const ckt_lds_choice *b,
                   int64_t b_cycles)
{
    if (a->conflict_free != b->conflict_free) return a->conflict_free;
    if (a->conflict_free)
        return a->lds_bytes < b->lds_bytes || (a->lds_bytes == b->lds_bytes && a_cycles < b_cycles);
    return a_cycles < b_cycles || (a_cycles == b_cycles && a->lds_bytes < b->lds_bytes);
}

static int64_t total_cycles(const ckt_lds_choice *c)
{
    return (c->has_write ? c->write.cycles : 0) + (c->has_read ? c->read.cycles : 0);
}

/* Analyse one placement; false when it cannot serve the patterns (a swizzle that splits a
 * vector, a padding that breaks the instruction's alignment). */
static bool try_one(const ckt_target *t, const ckt_lds_tensor *lt, int64_t lds_elems,
                    const ckt_lds_pattern *w, const ckt_lds_pattern *r, ckt_lds_choice *c)
{
    memset(c, 0, sizeof *c);
    c->tensor = *lt;
    c->has_write = w != NULL;
    c->has_read = r != NULL;
    if (ckt_mul_ovf(lds_elems, lt->elem_bytes, &c->lds_bytes)) return false;
    ckt_error e2;
    if (w && ckt_lds_analyze_tensor(t, lt, &w->thread_map, w->vector, 1, &c->write, &e2))
        return false;
    if (r && ckt_lds_analyze_tensor(t, lt, &r->thread_map, r->vector, 0, &c->read, &e2))
        return false;
    c->conflict_free = (!w || c->write.cycles == c->write.ideal_cycles) &&
                       (!r || c->read.cycles == c->read.ideal_cycles);
    return true;
}

static int64_t analysis_work(const ckt_lds_pattern *p)
{
    if (!p) return 0;
    int64_t n = ckt_layout_size(&p->thread_map), w;
    return ckt_mul_ovf(n, p->vector > 0 ? p->vector : 1, &w) ? INT64_MAX : w;
}

ckt_status ckt_lds_find_swizzle(const ckt_target *t, const ckt_layout *layout, int elem_bytes,
                                const ckt_lds_pattern *write, const ckt_lds_pattern *read,
                                const ckt_lds_search_opts *opts, ckt_lds_choice *out,
                                ckt_error *err)
{
    if (!t || !layout || !out) return ckt_fail(err, CKT_EINVAL, "lds.find_swizzle: NULL argument");
    if (!write && !read)
        return ckt_fail(err, CKT_EINVAL,
                        "lds.find_swizzle: give a write pattern, a read pattern or both");
    if (elem_bytes <= 0)
        return ckt_fail(err, CKT_EINVAL, "lds.find_swizzle: element size %d must be positive",
                        elem_bytes);
    ckt_lds_search_opts o;
    if (opts)
        o = *opts;
    else
        ckt_lds_search_defaults(&o);
    ckt_status st = check_opts(&o, err);
    if (st) return st;

    /* the search analyses up to a few hundred placements: bound the whole, not only one analysis */
    int64_t per = analysis_work(write), rw = analysis_work(read), ncand, total;
    ncand = 1 +
            (int64_t)(o.b_max - o.b_min + 1) * (o.m_max - o.m_min + 1) * (o.s_max - o.s_min + 1) +
            o.max_padding_banks;
    if (ckt_add_ovf(per, rw, &per) || ckt_mul_ovf(per, ncand, &total) || total > 4 * CKT_WORK_LIMIT)
        return ckt_fail(err, CKT_ECAPACITY,
                        "lds.find_swizzle: %lld placements x the patterns' %lld lane-elements is "
                        "more than the analysis limit %lld",
                        (long long)ncand, (long long)per, (long long)(4 * CKT_WORK_LIMIT));

    int64_t cosize = ckt_layout_cosize(layout), plain_bytes;
    if (cosize <= 0 || ckt_mul_ovf(cosize, elem_bytes, &plain_bytes))
        return ckt_fail(
            err, CKT_EINVAL,
            "lds.find_swizzle: the layout's footprint of %lld elements is not a usable LDS size",
            (long long)cosize);

    /* the plain layout first: its errors are the caller's (bad thread map, vector, instruction) */
    ckt_lds_tensor lt;
    memset(&lt, 0, sizeof lt);
    lt.layout = *layout;
    lt.elem_bytes = elem_bytes;
    ckt_lds_choice best, c;
    memset(&best, 0, sizeof best);
    best.tensor = lt;
    best.has_write = write != NULL;
    best.has_read = read != NULL;
    best.lds_bytes = plain_bytes;
    if (write && (st = ckt_lds_analyze_tensor(t, &lt, &write->thread_map, write->vector, 1,
                                              &best.write, err)))
        return st;
    if (read &&
        (st = ckt_lds_analyze_tensor(t, &lt, &read->thread_map, read->vector, 0, &best.read, err)))
        return st;
    best.conflict_free = (!write || best.write.cycles == best.write.ideal_cycles) &&
                         (!read || best.read.cycles == best.read.ideal_cycles);
    int candidates = 1;
    bool done = best.conflict_free;

    /* swizzles: only bits M..M+B-1 change, so offsets stay inside their 2^(M+B) block; the
     * footprint grows only when that block does not divide the tile */
    for (int b = o.b_min; b <= o.b_max && !done; b++)
        for (int m = o.m_min; m <= o.m_max && !done; m++)
            for (int s = o.s_min > b ? o.s_min : b; s <= o.s_max && !done; s++) {
                if (m + s >= 62 || ((int64_t)1 << (m + s)) >= cosize)
                    continue; /* the source bits are all zero: identity */
                ckt_error e2;
                memset(&lt.sw, 0, sizeof lt.sw);
                if (ckt_swizzle_make(b, m, s, &lt.sw, &e2)) continue;
                int64_t block = (int64_t)1 << (m + b), elems = ckt_ceil_div(cosize, block);
                if (ckt_mul_ovf(elems, block, &elems)) continue;
                candidates++;
                if (!try_one(t, &lt, elems, write, read, &c)) continue;
                if (better(&c, total_cycles(&c), &best, total_cycles(&best))) best = c;
                done = best.conflict_free && best.lds_bytes == plain_bytes;
            }

    /* row paddings: each costs LDS, more banks cost more, so the first conflict-free one wins */
    memset(&lt.sw, 0, sizeof lt.sw);
    for (int pad = 1; pad <= o.max_padding_banks && !done; pad++) {
        ckt_error e2;
        if (ckt_lds_pad(layout, pad, t->bank_bytes, elem_bytes, &lt.layout, &e2)) {
            if (ckt_layout_rank(layout) != 2)
                break; /* not a (rows, cols) layout: padding does not apply */
            continue;  /* not a whole number of elements: try the next */
        }
        candidates++;
        if (!try_one(t, &lt, ckt_layout_cosize(&lt.layout), write, read, &c)) continue;
        c.padding_banks = pad;
        if (better(&c, total_cycles(&c), &best, total_cycles(&best))) best = c;
        done = c.conflict_free;
    }
    best.lds_extra_bytes = best.lds_bytes - plain_bytes;
    best.candidates = candidates;
    *out = best;
    return CKT_OK;
}
