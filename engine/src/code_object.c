/* Reading resource usage from an AMDGPU HSA code object: the ELF note NT_AMDGPU_METADATA
 * ("AMDGPU", type 32) holds a msgpack map whose kernel entries carry .vgpr_count,
 * .sgpr_count, .agpr_count, .group_segment_fixed_size, .private_segment_fixed_size and the
 * spill counts. The input is untrusted: every read is bounds-checked. */
#include <string.h>

#include "ckt/jit.h"

typedef struct {
    const uint8_t *p, *end;
    int depth;
    ckt_resources *r;
    const char *key; /* the last string read, when it is a map key of interest */
    size_t keylen;
} mp;

static int need(mp *m, size_t n) { return (size_t)(m->end - m->p) >= n; }

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

static void store(mp *m, int64_t v)
{
    static const struct { const char *k; size_t off; } keys[] = {
        {".vgpr_count", offsetof(ckt_resources, vgprs)}, {".sgpr_count", offsetof(ckt_resources, sgprs)},
        {".agpr_count", offsetof(ckt_resources, agprs)}, {".vgpr_spill_count", offsetof(ckt_resources, vgpr_spills)},
        {".sgpr_spill_count", offsetof(ckt_resources, sgpr_spills)},
        {".group_segment_fixed_size", offsetof(ckt_resources, shared_bytes)},
        {".private_segment_fixed_size", offsetof(ckt_resources, scratch_bytes)}};
    if (!m->key) return;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i].k) == m->keylen && memcmp(keys[i].k, m->key, m->keylen) == 0) {
            int64_t *dst = (int64_t *)((char *)m->r + keys[i].off);
            if (v > *dst) *dst = v; /* the largest over the kernels of the object */
        }
}

/* Parse one msgpack value; is_key: it is a map key (remember strings). Returns 0 on malformed input. */
static int value(mp *m, int is_key)
{
    if (!need(m, 1) || ++m->depth > 64) return 0;
    uint8_t t = *m->p++;
    int ok = 1;
    uint64_t n = 0;
    if (t <= 0x7f) { if (!is_key) store(m, t); goto out; }
    if (t >= 0xe0) goto out;
    if ((t & 0xf0) == 0x80 || t == 0xde || t == 0xdf) { /* map */
        if (t == 0xde) { if (!need(m, 2)) return 0; n = be(m->p, 2); m->p += 2; }
        else if (t == 0xdf) { if (!need(m, 4)) return 0; n = be(m->p, 4); m->p += 4; }
        else n = t & 0x0f;
        for (uint64_t i = 0; i < n && ok; i++) {
            m->key = NULL;
            ok = value(m, 1) && value(m, 0);
        }
        m->key = NULL;
        goto out;
    }
    if ((t & 0xf0) == 0x90 || t == 0xdc || t == 0xdd) { /* array */
        if (t == 0xdc) { if (!need(m, 2)) return 0; n = be(m->p, 2); m->p += 2; }
        else if (t == 0xdd) { if (!need(m, 4)) return 0; n = be(m->p, 4); m->p += 4; }
        else n = t & 0x0f;
        const char *k = m->key;
        size_t kl = m->keylen;
        for (uint64_t i = 0; i < n && ok; i++) { m->key = NULL; ok = value(m, 0); }
        m->key = k;
        m->keylen = kl;
        goto out;
    }
    if ((t & 0xe0) == 0xa0 || t == 0xd9 || t == 0xda || t == 0xdb || t == 0xc4 || t == 0xc5 || t == 0xc6) { /* str / bin */
        if ((t & 0xe0) == 0xa0) n = t & 0x1f;
        else {
            int w = (t == 0xd9 || t == 0xc4) ? 1 : (t == 0xda || t == 0xc5) ? 2 : 4;
            if (!need(m, (size_t)w)) return 0;
            n = be(m->p, w);
            m->p += w;
        }
        if (!need(m, n)) return 0;
        if (is_key) { m->key = (const char *)m->p; m->keylen = n; }
        m->p += n;
        goto out;
    }
    switch (t) {
    case 0xc0: case 0xc2: case 0xc3: break;
    case 0xcc: case 0xd0: if (!need(m, 1)) return 0; if (!is_key) store(m, t == 0xcc ? (int64_t)m->p[0] : (int8_t)m->p[0]); m->p += 1; break;
    case 0xcd: case 0xd1: if (!need(m, 2)) return 0; if (!is_key) store(m, (int64_t)be(m->p, 2)); m->p += 2; break;
    case 0xce: case 0xd2: case 0xca: if (!need(m, 4)) return 0; if (!is_key && t == 0xce) store(m, (int64_t)be(m->p, 4)); m->p += 4; break;
    case 0xcf: case 0xd3: case 0xcb: if (!need(m, 8)) return 0; m->p += 8; break;
    default: ok = 0;
    }
out:
    m->depth--;
    return ok;
}

ckt_status ckt_code_object_resources(const uint8_t *elf, size_t size, ckt_resources *out, ckt_error *err)
{
    if (!elf || !out) return ckt_fail(err, CKT_EINVAL, "code object: NULL argument");
    if (size < 64 || memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2 || elf[5] != 1)
        return ckt_fail(err, CKT_EINVAL, "code object: not a little-endian ELF64 file");
    ckt_resources r = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    uint64_t shoff = 0;
    uint16_t shentsize = 0, shnum = 0;
    memcpy(&shoff, elf + 0x28, 8);
    memcpy(&shentsize, elf + 0x3a, 2);
    memcpy(&shnum, elf + 0x3c, 2);
    if (shentsize < 64 || shoff > size || (uint64_t)shnum * shentsize > size - shoff)
        return ckt_fail(err, CKT_EINVAL, "code object: section headers out of bounds");
    int found = 0;
    for (uint16_t i = 0; i < shnum; i++) {
        const uint8_t *sh = elf + shoff + (uint64_t)i * shentsize;
        uint32_t type;
        uint64_t off, sz;
        memcpy(&type, sh + 4, 4);
        memcpy(&off, sh + 0x18, 8);
        memcpy(&sz, sh + 0x20, 8);
        if (type != 7 /* SHT_NOTE */) continue;
        if (off > size || sz > size - off) return ckt_fail(err, CKT_EINVAL, "code object: note section out of bounds");
        const uint8_t *p = elf + off, *end = p + sz;
        while ((size_t)(end - p) >= 12) {
            uint32_t namesz, descsz, ntype;
            memcpy(&namesz, p, 4);
            memcpy(&descsz, p + 4, 4);
            memcpy(&ntype, p + 8, 4);
            size_t nalign = ((size_t)namesz + 3) & ~(size_t)3, dalign = ((size_t)descsz + 3) & ~(size_t)3;
            if (nalign > (size_t)(end - p) - 12 || dalign > (size_t)(end - p) - 12 - nalign)
                return ckt_fail(err, CKT_EINVAL, "code object: note out of bounds");
            const uint8_t *name = p + 12, *desc = name + nalign;
            if (ntype == 32 && namesz >= 6 && memcmp(name, "AMDGPU", 6) == 0) {
                mp m = {desc, desc + descsz, 0, &r, NULL, 0};
                if (!value(&m, 0)) return ckt_fail(err, CKT_EINVAL, "code object: malformed AMDGPU metadata");
                found = 1;
            }
            p = desc + dalign;
        }
    }
    if (!found) return ckt_fail(err, CKT_EINVAL, "code object: no AMDGPU metadata note");
    *out = r;
    return CKT_OK;
}
