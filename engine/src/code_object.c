/* Reading resource usage from an AMDGPU HSA code object: the ELF note NT_AMDGPU_METADATA
 * ("AMDGPU", type 32) holds a msgpack map whose kernel entries carry .vgpr_count,
 * .sgpr_count, .agpr_count, .group_segment_fixed_size, .private_segment_fixed_size and the
 * spill counts. The input is untrusted: every read is bounds-checked. */
#include <stdio.h>
#include <stdlib.h>
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
    static const struct {
        const char *k;
        size_t off;
    } keys[] = {{".vgpr_count", offsetof(ckt_resources, vgprs)},
                {".sgpr_count", offsetof(ckt_resources, sgprs)},
                {".agpr_count", offsetof(ckt_resources, agprs)},
                {".vgpr_spill_count", offsetof(ckt_resources, vgpr_spills)},
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

/* The element count of a msgpack map or array of type byte t: 16 bits after it (t16), 32 bits
 * (t16 + 1), or in t's low four bits (fixmap, fixarray). 0: truncated. */
static int count(mp *m, uint8_t t, uint8_t t16, uint64_t *n)
{
    int bytes = t == t16 ? 2 : t == t16 + 1 ? 4 : 0;
    if (!bytes) {
        *n = t & 0x0f;
        return 1;
    }
    if (!need(m, (size_t)bytes)) return 0;
    *n = be(m->p, bytes);
    m->p += bytes;
    return 1;
}

/* The payload bytes of a msgpack fixed-width number of type byte t (uint8..64, int8..64,
 * float32/64); 0: not one. */
static int scalar_width(uint8_t t)
{
    switch (t) {
    case 0xcc:
    case 0xd0: return 1;
    case 0xcd:
    case 0xd1: return 2;
    case 0xce:
    case 0xd2:
    case 0xca: return 4;
    case 0xcf:
    case 0xd3:
    case 0xcb: return 8;
    default: return 0;
    }
}

/* Parse one msgpack value; is_key: it is a map key (remember strings). Returns 0 on malformed
 * input. */
static int value(mp *m, int is_key)
{
    if (!need(m, 1) || ++m->depth > 64) return 0;
    uint8_t t = *m->p++;
    int ok = 1;
    uint64_t n = 0;
    if (t <= 0x7f) {
        if (!is_key) store(m, t);
        goto out;
    }
    if (t >= 0xe0) goto out;
    if ((t & 0xf0) == 0x80 || t == 0xde || t == 0xdf) { /* map */
        if (!count(m, t, 0xde, &n)) return 0;
        for (uint64_t i = 0; i < n && ok; i++) {
            m->key = NULL;
            ok = value(m, 1) && value(m, 0);
        }
        m->key = NULL;
        goto out;
    }
    if ((t & 0xf0) == 0x90 || t == 0xdc || t == 0xdd) { /* array */
        if (!count(m, t, 0xdc, &n)) return 0;
        const char *k = m->key;
        size_t kl = m->keylen;
        for (uint64_t i = 0; i < n && ok; i++) {
            m->key = NULL;
            ok = value(m, 0);
        }
        m->key = k;
        m->keylen = kl;
        goto out;
    }
    if ((t & 0xe0) == 0xa0 || t == 0xd9 || t == 0xda || t == 0xdb || t == 0xc4 || t == 0xc5 ||
        t == 0xc6) { /* str / bin */
        if ((t & 0xe0) == 0xa0)
            n = t & 0x1f;
        else {
            int w = (t == 0xd9 || t == 0xc4) ? 1 : (t == 0xda || t == 0xc5) ? 2 : 4;
            if (!need(m, (size_t)w)) return 0;
            n = be(m->p, w);
            m->p += w;
        }
        if (!need(m, n)) return 0;
        if (is_key) {
            m->key = (const char *)m->p;
            m->keylen = n;
        }
        m->p += n;
        goto out;
    }
    if (t == 0xc0 || t == 0xc2 || t == 0xc3) goto out; /* nil, false, true */
    /* the fixed-width numbers: the unsigned ones of up to 32 bits, int8 and int16 (read as
     * unsigned) are stored; int32, the 64-bit ones and floats are skipped */
    int w = scalar_width(t);
    if (!w) {
        ok = 0;
        goto out;
    }
    if (!need(m, (size_t)w)) return 0;
    if (!is_key && w < 8 && t != 0xd2 && t != 0xca)
        store(m, t == 0xd0 ? (int8_t)m->p[0] : (int64_t)be(m->p, w));
    m->p += w;
out:
    m->depth--;
    return ok;
}

/* The section header table of an ELF64 file (little-endian), checked against the file. */
typedef struct {
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx;
} elf_sections;

/* what: the message's subject ("code object", "cubin"). */
static ckt_status elf_sections_of(const uint8_t *elf, size_t size, const char *what,
                                  elf_sections *e, ckt_error *err)
{
    if (size < 64 ||
        memcmp(elf,
               "\x7f"
               "ELF",
               4) != 0 ||
        elf[4] != 2 || elf[5] != 1)
        return ckt_fail(err, CKT_EINVAL, "%s: not a little-endian ELF64 file", what);
    memcpy(&e->shoff, elf + 0x28, 8);
    memcpy(&e->shentsize, elf + 0x3a, 2);
    memcpy(&e->shnum, elf + 0x3c, 2);
    memcpy(&e->shstrndx, elf + 0x3e, 2);
    if (e->shentsize < 64 || e->shoff > size || (uint64_t)e->shnum * e->shentsize > size - e->shoff)
        return ckt_fail(err, CKT_EINVAL, "%s: section headers out of bounds", what);
    return CKT_OK;
}

/* Section header i (< shnum): its file offset and size (sh_offset, sh_size; not yet checked
 * against the file). */
static const uint8_t *elf_section(const elf_sections *e, const uint8_t *elf, uint16_t i,
                                  uint64_t *off, uint64_t *sz)
{
    const uint8_t *sh = elf + e->shoff + (uint64_t)i * e->shentsize;
    memcpy(off, sh + 0x18, 8);
    memcpy(sz, sh + 0x20, 8);
    return sh;
}

/* The descriptor of the code object's AMDGPU metadata note (NT_AMDGPU_METADATA: msgpack), every
 * offset checked against the file. */
static ckt_status metadata_note(const uint8_t *elf, size_t size, const uint8_t **desc, size_t *len,
                                ckt_error *err)
{
    elf_sections e;
    ckt_status st = elf_sections_of(elf, size, "code object", &e, err);
    if (st) return st;
    for (uint16_t i = 0; i < e.shnum; i++) {
        uint64_t off, sz;
        const uint8_t *sh = elf_section(&e, elf, i, &off, &sz);
        uint32_t type;
        memcpy(&type, sh + 4, 4);
        if (type != 7 /* SHT_NOTE */) continue;
        if (off > size || sz > size - off)
            return ckt_fail(err, CKT_EINVAL, "code object: note section out of bounds");
        const uint8_t *p = elf + off, *end = p + sz;
        while ((size_t)(end - p) >= 12) {
            uint32_t namesz, descsz, ntype;
            memcpy(&namesz, p, 4);
            memcpy(&descsz, p + 4, 4);
            memcpy(&ntype, p + 8, 4);
            size_t nalign = ((size_t)namesz + 3) & ~(size_t)3,
                   dalign = ((size_t)descsz + 3) & ~(size_t)3;
            if (nalign > (size_t)(end - p) - 12 || dalign > (size_t)(end - p) - 12 - nalign)
                return ckt_fail(err, CKT_EINVAL, "code object: note out of bounds");
            const uint8_t *name = p + 12;
            if (ntype == 32 && namesz >= 6 && memcmp(name, "AMDGPU", 6) == 0) {
                *desc = name + nalign;
                *len = descsz;
                return CKT_OK;
            }
            p = name + nalign + dalign;
        }
    }
    return ckt_fail(err, CKT_EINVAL, "code object: no AMDGPU metadata note");
}

ckt_status ckt_code_object_resources(const uint8_t *elf, size_t size, ckt_resources *out,
                                     ckt_error *err)
{
    if (!elf || !out) return ckt_fail(err, CKT_EINVAL, "code object: NULL argument");
    const uint8_t *desc = NULL;
    size_t len = 0; /* set by metadata_note (gcc -O3 cannot see it) */
    ckt_status s = metadata_note(elf, size, &desc, &len, err);
    if (s) return s;
    ckt_resources r = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    mp m = {desc, desc + len, 0, &r, NULL, 0};
    if (!value(&m, 0)) return ckt_fail(err, CKT_EINVAL, "code object: malformed AMDGPU metadata");
    *out = r;
    return CKT_OK;
}

/* ---- explicit kernel arguments (.args of the kernel named .name), for launch checks ---- */

typedef struct {
    const uint8_t *p, *end;
} cur;

/* the header of a map / array / string, or an unsigned integer; 0 when p holds another type */
static int hdr(cur *c, int want, uint64_t *n)
{
    if (c->p >= c->end) return 0;
    uint8_t t = *c->p;
    int w = 0;
    if (want == 'm' && (t & 0xf0) == 0x80) {
        *n = t & 0x0f;
        c->p++;
        return 1;
    }
    if (want == 'a' && (t & 0xf0) == 0x90) {
        *n = t & 0x0f;
        c->p++;
        return 1;
    }
    if (want == 's' && (t & 0xe0) == 0xa0) {
        *n = t & 0x1f;
        c->p++;
        return 1;
    }
    if (want == 'u' && t <= 0x7f) {
        *n = t;
        c->p++;
        return 1;
    }
    if (want == 'm') w = t == 0xde ? 2 : t == 0xdf ? 4 : 0;
    if (want == 'a') w = t == 0xdc ? 2 : t == 0xdd ? 4 : 0;
    if (want == 's') w = t == 0xd9 ? 1 : t == 0xda ? 2 : t == 0xdb ? 4 : 0;
    if (want == 'u') w = t == 0xcc ? 1 : t == 0xcd ? 2 : t == 0xce ? 4 : t == 0xcf ? 8 : 0;
    if (!w || (size_t)(c->end - c->p) < (size_t)w + 1) return 0;
    *n = be(c->p + 1, w);
    c->p += 1 + w;
    return 1;
}

static int str(cur *c, const uint8_t **s, uint64_t *n)
{
    if (!hdr(c, 's', n) || *n > (uint64_t)(c->end - c->p)) return 0;
    *s = c->p;
    c->p += *n;
    return 1;
}

static int is(const uint8_t *s, uint64_t n, const char *lit)
{
    return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* skip one value with the existing bounds-checked walker (it stores nothing without a key) */
static int skip(cur *c)
{
    ckt_resources scratch = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    mp m = {c->p, c->end, 0, &scratch, NULL, 0};
    if (!value(&m, 1)) return 0; /* as a key: no stores */
    c->p = m.p;
    return 1;
}

/* one kernel's map: its name and, when it is `kernel`, the explicit argument sizes */
static int kernel_map(cur *c, const char *kernel, int64_t *sizes, int cap, int *count, int *found)
{
    uint64_t n, k, len;
    const uint8_t *key, *name = NULL;
    uint64_t namelen = 0;
    cur args = {NULL, NULL};
    if (!hdr(c, 'm', &n)) return skip(c);
    for (uint64_t i = 0; i < n; i++) {
        if (!str(c, &key, &len)) return 0;
        if (is(key, len, ".name")) {
            if (!str(c, &name, &namelen)) return 0;
        } else if (is(key, len, ".args")) {
            args.p = c->p;
            args.end = c->end;
            if (!skip(c)) return 0;
        } else if (!skip(c))
            return 0;
    }
    if (!name || !is(name, namelen, kernel) || !args.p) return 1;
    if (!hdr(&args, 'a', &k)) return 0;
    int nexp = 0;
    for (uint64_t a = 0; a < k; a++) {
        uint64_t fields, size = UINT64_MAX;
        int hidden = 0;
        if (!hdr(&args, 'm', &fields)) return 0;
        for (uint64_t f = 0; f < fields; f++) {
            if (!str(&args, &key, &len)) return 0;
            const uint8_t *v;
            uint64_t vl;
            if (is(key, len, ".size")) {
                if (!hdr(&args, 'u', &size)) return 0;
            } else if (is(key, len, ".value_kind")) {
                if (!str(&args, &v, &vl)) return 0;
                hidden = vl >= 7 && !memcmp(v, "hidden_", 7);
            } else if (!skip(&args))
                return 0;
        }
        if (hidden) continue;
        if (size == UINT64_MAX || size > 4096 || nexp >= cap) return 0;
        sizes[nexp++] = (int64_t)size;
    }
    *count = nexp;
    *found = 1;
    return 1;
}

ckt_status ckt_code_object_kernel_args(const uint8_t *elf, size_t size, const char *kernel,
                                       int64_t *sizes, int cap, int *count, ckt_error *err)
{
    if (!elf || !kernel || !sizes || !count || cap < 0)
        return ckt_fail(err, CKT_EINVAL, "code object: NULL argument");
    const uint8_t *desc = NULL, *key;
    size_t len = 0; /* set by metadata_note (gcc -O3 cannot see it) */
    ckt_status s = metadata_note(elf, size, &desc, &len, err);
    if (s) return s;
    cur c = {desc, desc + len};
    uint64_t n, klen, nk;
    if (!hdr(&c, 'm', &n))
        return ckt_fail(err, CKT_EINVAL, "code object: malformed AMDGPU metadata");
    for (uint64_t k = 0; k < n; k++) {
        if (!str(&c, &key, &klen))
            return ckt_fail(err, CKT_EINVAL, "code object: malformed AMDGPU metadata");
        if (!is(key, klen, "amdhsa.kernels")) {
            if (!skip(&c))
                return ckt_fail(err, CKT_EINVAL, "code object: malformed AMDGPU metadata");
            continue;
        }
        if (!hdr(&c, 'a', &nk))
            return ckt_fail(err, CKT_EINVAL, "code object: amdhsa.kernels is not a list");
        int found = 0;
        for (uint64_t j = 0; j < nk; j++)
            if (!kernel_map(&c, kernel, sizes, cap, count, &found))
                return ckt_fail(
                    err, CKT_EINVAL,
                    "code object: malformed kernel metadata (or more than %d arguments)", cap);
        if (found) return CKT_OK;
        return ckt_fail(err, CKT_EINVAL, "code object: no kernel '%.64s' in the metadata", kernel);
    }
    return ckt_fail(err, CKT_EINVAL, "code object: no amdhsa.kernels in the AMDGPU metadata");
}

/* ---- cubin: the parameters of a kernel from its .nv.info.<kernel> section ----
 * Records, each a multiple of 4 bytes: u8 format, u8 attribute, then
 *   format 1, 2, 3 (EIFMT_NVAL, _BVAL, _HVAL): a 2-byte value slot (unused, u8, u16): 4 bytes in
 * all; format 4 (EIFMT_SVAL): u16 length, then that many bytes. The parameters, one record each, in
 * any order: EIATTR_KPARAM_INFO (0x17, 12 bytes): u32 index, u16 ordinal, u16 offset, u32 flags
 * with the size in bytes in bits 18..31; EIATTR_KPARAM_INFO_V2 (0x45, 12 bytes; ptxas writes it for
 * kernels with large by-value parameters, past the old 4 KiB): u32 index, u16 ordinal, u16 offset,
 * u16 size, u16 flags. EIATTR_CBANK_PARAM_SIZE (0x19, format 3) and EIATTR_PARAM_CBANK (0x0a: u32
 * symbol, u16 bank offset, u16 size) hold the parameter bytes in all: the last parameter must end
 * exactly there. CUDA 13's NVRTC writes format-1 records (0x35 on sm_8x) and format-2 records
 * (0x4c, the barrier count, in kernels that use barriers) among them. All checked against
 * NVRTC 13.0 cubins for sm_80 ... sm_90a. Another record format, or records that disagree with the
 * bank size, give CKT_EUNSUPPORTED: the parameters are then unknown rather than guessed. */
static ckt_status nv_info_params(const uint8_t *p, const uint8_t *end, const char *sec,
                                 const char *kernel, int64_t *sizes, int cap, int *count,
                                 ckt_error *err)
{
    int n = 0;
    uint64_t seen = 0, last_end = 0, bank = UINT64_MAX;
    while (end - p >= 4) {
        uint8_t fmt = p[0], attr = p[1];
        uint16_t v;
        memcpy(&v, p + 2, 2);
        if (fmt >= 1 && fmt <= 3) {
            if (fmt == 3 && attr == 0x19) {
                if (bank != UINT64_MAX && bank != v)
                    return ckt_fail(err, CKT_EUNSUPPORTED,
                                    "cubin: %s gives two parameter bank sizes (%llu, %u)", sec,
                                    (unsigned long long)bank, v);
                bank = v;
            }
            p += 4;
            continue;
        }
        if (fmt != 4)
            return ckt_fail(err, CKT_EUNSUPPORTED,
                            "cubin: %s has a record of format %u (attribute 0x%02x)", sec, fmt,
                            attr);
        if (v > end - p - 4)
            return ckt_fail(err, CKT_EINVAL,
                            "cubin: %s record (attribute 0x%02x) of %u bytes runs past the section",
                            sec, attr, v);
        const uint8_t *d = p + 4;
        if (attr == 0x0a && v >= 8) {
            uint16_t psize;
            memcpy(&psize, d + 6, 2);
            if (bank != UINT64_MAX && bank != psize)
                return ckt_fail(err, CKT_EUNSUPPORTED,
                                "cubin: %s gives two parameter bank sizes (%llu, %u)", sec,
                                (unsigned long long)bank, psize);
            bank = psize;
        } else if ((attr == 0x17 || attr == 0x45) && v >= 12) {
            uint16_t ordinal, offset;
            uint32_t word;
            memcpy(&ordinal, d + 4, 2);
            memcpy(&offset, d + 6, 2);
            memcpy(&word, d + 8, 4);
            uint64_t psize = attr == 0x17 ? word >> 18 : (word & 0xffffu);
            if (ordinal >= cap || ordinal >= 64 || (seen >> ordinal & 1))
                return ckt_fail(err, CKT_EINVAL,
                                "cubin: parameter ordinal %u of '%s' repeated or beyond %d",
                                ordinal, kernel, cap < 64 ? cap : 64);
            seen |= UINT64_C(1) << ordinal;
            sizes[ordinal] = (int64_t)psize;
            if (offset + psize > last_end) last_end = offset + psize;
            n++;
        }
        p = d + v;
    }
    if (n < 64 && seen != ((UINT64_C(1) << n) - 1))
        return ckt_fail(err, CKT_EINVAL, "cubin: parameter ordinals of '%s' have gaps", kernel);
    if (bank != UINT64_MAX && bank != last_end)
        return ckt_fail(err, CKT_EUNSUPPORTED,
                        "cubin: the %d parameter records of '%s' end at byte %llu, its parameter "
                        "bank holds %llu bytes",
                        n, kernel, (unsigned long long)last_end, (unsigned long long)bank);
    *count = n;
    return CKT_OK;
}

ckt_status ckt_cubin_kernel_args(const uint8_t *elf, size_t size, const char *kernel,
                                 int64_t *sizes, int cap, int *count, ckt_error *err)
{
    if (!elf) return ckt_fail(err, CKT_EINVAL, "cubin: elf is NULL");
    if (!kernel) return ckt_fail(err, CKT_EINVAL, "cubin: kernel is NULL");
    if (!sizes || !count)
        return ckt_fail(err, CKT_EINVAL, "cubin: %s is NULL", !sizes ? "sizes" : "count");
    if (cap < 0) return ckt_fail(err, CKT_EINVAL, "cubin: cap %d is negative", cap);
    elf_sections e;
    ckt_status st = elf_sections_of(elf, size, "cubin", &e, err);
    if (st) return st;
    if (e.shstrndx >= e.shnum)
        return ckt_fail(err, CKT_EINVAL, "cubin: section headers out of bounds");
    uint64_t stroff, strsz;
    elf_section(&e, elf, e.shstrndx, &stroff, &strsz);
    if (stroff > size || strsz > size - stroff)
        return ckt_fail(err, CKT_EINVAL, "cubin: section names out of bounds");
    char want[160];
    int wl = snprintf(want, sizeof want, ".nv.info.%s", kernel);
    if (wl < 0 || (size_t)wl >= sizeof want)
        return ckt_fail(err, CKT_EINVAL, "cubin: kernel name too long");
    for (uint16_t i = 0; i < e.shnum; i++) {
        uint64_t off, sz;
        const uint8_t *sh = elf_section(&e, elf, i, &off, &sz);
        uint32_t nameoff;
        memcpy(&nameoff, sh, 4);
        if (nameoff >= strsz || strsz - nameoff < (uint64_t)wl + 1 ||
            memcmp(elf + stroff + nameoff, want, (size_t)wl + 1) != 0)
            continue;
        if (off > size || sz > size - off)
            return ckt_fail(err, CKT_EINVAL, "cubin: %s out of bounds", want);
        return nv_info_params(elf + off, elf + off + sz, want, kernel, sizes, cap, count, err);
    }
    return ckt_fail(err, CKT_EINVAL, "cubin: no section %s", want);
}

/* ---- cubin: a kernel's registers, stack frame and static shared memory ----
 * .text.<kernel>'s sh_info holds the kernel's symbol index in its low 24 bits (sm_8x: the
 * register count in the top 8). The global .nv.info section holds format-4 records of
 * (u32 symbol, u32 value): EIATTR_REGCOUNT (0x2f) and EIATTR_FRAME_SIZE (0x11). The
 * .nv.shared.<kernel> section (SHT_NOBITS) is the static shared memory, plus 1 KiB that ptxas
 * reserves in it from sm_90 (checked against ptxas' report for NVRTC 13.0 cubins, sm_80 to
 * sm_90a: tests/unit/data/ptxas). */
ckt_status ckt_cubin_resources(const uint8_t *elf, size_t size, const char *kernel,
                               const char *arch, ckt_resources *out, ckt_error *err)
{
    if (!elf || !kernel || !out)
        return ckt_fail(err, CKT_EINVAL, "cubin: %s is NULL",
                        !elf      ? "elf"
                        : !kernel ? "kernel"
                                  : "out");
    ckt_resources r = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    elf_sections e;
    ckt_status st = elf_sections_of(elf, size, "cubin", &e, err);
    if (st) return st;
    if (e.shstrndx >= e.shnum)
        return ckt_fail(err, CKT_EINVAL, "cubin: section headers out of bounds");
    uint64_t stroff, strsz;
    elf_section(&e, elf, e.shstrndx, &stroff, &strsz);
    if (stroff > size || strsz > size - stroff)
        return ckt_fail(err, CKT_EINVAL, "cubin: section names out of bounds");
    char text[160], shared[160];
    int tl = snprintf(text, sizeof text, ".text.%s", kernel);
    int sl = snprintf(shared, sizeof shared, ".nv.shared.%s", kernel);
    if (tl < 0 || sl < 0 || (size_t)sl >= sizeof shared)
        return ckt_fail(err, CKT_EINVAL, "cubin: kernel name too long");
    int64_t sym = -1, shared_size = 0;
    uint16_t info_sec = 0xffff;
    for (uint16_t i = 0; i < e.shnum; i++) {
        uint64_t off, sz;
        const uint8_t *sh = elf_section(&e, elf, i, &off, &sz);
        uint32_t nameoff, info;
        memcpy(&nameoff, sh, 4);
        memcpy(&info, sh + 0x2c, 4);
        if (nameoff >= strsz) continue;
        const char *name = (const char *)elf + stroff + nameoff;
        size_t room = (size_t)(strsz - nameoff);
        if (room > (size_t)tl && !memcmp(name, text, (size_t)tl + 1)) {
            sym = info & 0xffffff;
            if (info >> 24) r.registers = info >> 24;
        } else if (room > (size_t)sl && !memcmp(name, shared, (size_t)sl + 1))
            shared_size = (int64_t)sz;
        else if (room > 8 && !memcmp(name, ".nv.info", 9))
            info_sec = i;
    }
    if (sym < 0) return ckt_fail(err, CKT_EINVAL, "cubin: no section %s", text);
    if (info_sec != 0xffff) {
        uint64_t off, sz;
        elf_section(&e, elf, info_sec, &off, &sz);
        if (off > size || sz > size - off)
            return ckt_fail(err, CKT_EINVAL, "cubin: .nv.info out of bounds");
        const uint8_t *p = elf + off, *end = p + sz;
        while (end - p >= 4) {
            uint8_t fmt = p[0], attr = p[1];
            uint16_t v;
            memcpy(&v, p + 2, 2);
            if (fmt != 4) {
                p += 4;
                continue;
            }
            if (v > end - p - 4)
                return ckt_fail(err, CKT_EINVAL, "cubin: .nv.info record runs past the section");
            uint32_t s32, val;
            if (v == 8 && (attr == 0x2f || attr == 0x11)) {
                memcpy(&s32, p + 4, 4);
                memcpy(&val, p + 8, 4);
                if (s32 == (uint32_t)sym) {
                    if (attr == 0x2f) r.registers = val;
                    if (attr == 0x11) r.scratch_bytes = val;
                }
            }
            p += 4 + v;
        }
    }
    int sm = arch && !strncmp(arch, "sm_", 3) ? atoi(arch + 3) : 0;
    int64_t reserved = sm >= 90 ? 1024 : 0;
    r.shared_bytes = shared_size >= reserved ? shared_size - reserved : shared_size;
    if (r.scratch_bytes == 0) r.spill_stores = r.spill_loads = 0; /* spills need a frame */
    *out = r;
    return CKT_OK;
}

/* ---- ptxas' verbose report in a log ---- */

/* the number just before `p` (skipping spaces), or -1 */
static int64_t number_before(const char *line, const char *p)
{
    while (p > line && p[-1] == ' ') p--;
    const char *q = p;
    while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
    return q == p ? -1 : strtoll(q, NULL, 10);
}

/* the number before `what` in the line [l, end), or -1 when the line has no `what` */
static int64_t field_in(const char *l, const char *end, const char *what)
{
    size_t n = strlen(what);
    for (const char *p = l; p + n <= end; p++)
        if (!memcmp(p, what, n)) return number_before(l, p);
    return -1;
}

static int line_has(const char *l, const char *end, const char *what)
{
    size_t n = strlen(what);
    for (const char *p = l; p + n <= end; p++)
        if (!memcmp(p, what, n)) return 1;
    return 0;
}

ckt_status ckt_ptxas_log_resources(const char *log, const char *kernel, ckt_resources *out,
                                   ckt_error *err)
{
    if (!log || !kernel || !out)
        return ckt_fail(err, CKT_EINVAL, "ptxas log: %s is NULL",
                        !log      ? "log"
                        : !kernel ? "kernel"
                                  : "out");
    ckt_resources r = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    char entry[192], props[192];
    snprintf(entry, sizeof entry, "Compiling entry function '%s'", kernel);
    snprintf(props, sizeof props, "Function properties for %s", kernel);
    /* Lines of interest: from "Compiling entry function 'K'" to the next entry. Within it,
     * "Function properties for K" (exactly K: callees have their own) is followed by the frame
     * and spill line; "Used N registers, ..., N bytes smem, ..." is the entry's. */
    int in_entry = 0, after_props = 0, found = 0;
    for (const char *l = log; *l;) {
        const char *end = strchr(l, '\n');
        if (!end) end = l + strlen(l);
        if (line_has(l, end, "Compiling entry function '")) {
            in_entry = line_has(l, end, entry);
            found |= in_entry;
            after_props = 0;
        } else if (in_entry) {
            const char *pp = NULL;
            size_t pn = strlen(props);
            for (const char *p = l; p + pn <= end; p++)
                if (!memcmp(p, props, pn)) pp = p;
            if (pp) {
                /* the name must end there: "for K" is not "for K2" */
                after_props = pp + pn == end || pp[pn] == '\r' || pp[pn] == ' ';
            } else if (after_props && line_has(l, end, "bytes stack frame")) {
                r.scratch_bytes = field_in(l, end, "bytes stack frame");
                r.spill_stores = field_in(l, end, "bytes spill stores");
                r.spill_loads = field_in(l, end, "bytes spill loads");
                after_props = 0;
            } else if (line_has(l, end, "Used ") && line_has(l, end, " registers")) {
                r.registers = field_in(l, end, " registers");
                int64_t smem = field_in(l, end, " bytes smem");
                r.shared_bytes = smem < 0 ? 0 : smem; /* ptxas leaves out 0 bytes */
                after_props = 0;
            } else if (line_has(l, end, "Function properties for "))
                after_props = 0; /* a callee's */
        }
        l = *end ? end + 1 : end;
    }
    if (!found || r.registers < 0)
        return ckt_fail(err, CKT_EINVAL, "ptxas log: no report for the entry function '%.64s'%s",
                        kernel, found ? " (no register count)" : "");
    *out = r;
    return CKT_OK;
}
