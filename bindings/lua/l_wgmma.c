/* ckt.wgmma_desc{layout=, dtype=, rows=, origin=, base=}: the shared-memory matrix descriptor of
 * one wgmma operand in an LDS tile (ckt/wgmma.h), for scripts, tests and the help. */
#include <stdio.h>
#include <string.h>

#include "l_internal.h"

static int l_wgmma_desc(lua_State *L)
{
    static const char *const fn = "wgmma_desc";
    static const char *const allowed[] = {"layout", "dtype", "rows", "origin", "base", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    ckt_l_check_fields(L, 1, fn, allowed);
    ckt_layout tile;
    ckt_swizzle sw = {0, 0, 0};
    lua_getfield(L, 1, "layout");
    if (lua_isnil(L, -1))
        return ckt_l_errorf(L,
                            "%s: field 'layout' is required (the LDS tile, rows x K, a layout or a "
                            "swizzled ckt.composed)",
                            fn);
    ckt_composed *c = luaL_testudata(L, -1, CKT_L_COMPOSED);
    if (c) {
        if (c->offset)
            return ckt_l_errorf(
                L, "%s: layout: a composed layout with an offset (%lld) is not an LDS tile", fn,
                (long long)c->offset);
        tile = c->inner;
        sw = c->sw;
    } else {
        ckt_l_tolayout(L, -1, "wgmma_desc: layout", &tile);
    }
    lua_pop(L, 1);
    const char *dt = "f16";
    ckt_l_field_string(L, 1, fn, "dtype", &dt);
    ckt_dtype dtype;
    ckt_error err;
    if (ckt_dtype_parse(dt, &dtype, &err)) return ckt_l_errorf(L, "%s: dtype: %s", fn, err.msg);
    int64_t rows = 64, base = 0, origin[2] = {0, 0};
    ckt_l_field_int(L, 1, fn, "rows", &rows);
    ckt_l_field_int(L, 1, fn, "base", &base);
    lua_getfield(L, 1, "origin");
    if (!lua_isnil(L, -1) && ckt_l_int_list(L, lua_gettop(L), "wgmma_desc: origin", origin, 2) != 2)
        return ckt_l_errorf(L, "%s: origin must be {row, k}", fn);
    lua_pop(L, 1);
    ckt_wgmma_desc d;
    uint64_t bits;
    if (ckt_wgmma_desc_make(&tile, sw.b ? &sw : NULL, dtype, rows, origin[0], origin[1], &d,
                            &err) ||
        ckt_wgmma_desc_encode(&d, base, &bits, &err))
        return ckt_l_error(L, &err);
    lua_createtable(L, 0, 7);
    ckt_l_set_int(L, "start", d.start);
    ckt_l_set_int(L, "lbo", d.lbo);
    ckt_l_set_int(L, "sbo", d.sbo);
    ckt_l_set_int(L, "swizzle", d.swizzle_bytes);
    ckt_l_set_string(L, "major", d.mn_major ? "mn" : "k");
    ckt_l_set_int(L, "alignment", (lua_Integer)ckt_wgmma_tile_alignment(sw.b ? &sw : NULL, dtype));
    char hex[24];
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)bits);
    ckt_l_set_string(L, "bits", hex);
    return 1;
}

void ckt_l_open_wgmma(lua_State *L)
{
    ckt_l_set_function(L, "wgmma_desc", l_wgmma_desc);
    ckt_l_help_add(L, "wgmma_desc",
                   "ckt.wgmma_desc{layout=, dtype=\"f16\", rows=64, origin={0, 0}, base=0}: the "
                   "shared-memory matrix descriptor\n"
                   "of one wgmma operand (sm_90a): the rows x 16 operand at origin {row, k} of an "
                   "LDS tile (layout: rows x K, a\n"
                   "layout or ckt.composed(ckt.swizzle(B,3,3), 0, layout) for 16-bit elements = "
                   "the hardware's 32B/64B/128B\n"
                   "swizzles Sw<B,4,3> on bytes), rows 64 for A and the instruction's N for B. -> "
                   "{start, lbo, sbo (bytes),\n"
                   "swizzle (0/32/64/128), major (\"k\"/\"mn\"), alignment (bytes the tile must "
                   "start on), bits (hex, at base)}.\n"
                   "A layout the hardware cannot read is an error naming the rule it breaks.");
}
