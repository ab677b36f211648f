/* Lua: ckt.target(name) -> the parsed target (ckt/target.h): what it compiles to and runs on,
 * the GPU it compiles for or emulates, and that GPU's hardware model (wave size, LDS banks and
 * instructions, matrix instructions). */
#include <string.h>

#include "ckt/target.h"
#include "l_internal.h"

/* The record's fields (besides the hardware model) into the table at the top. */
static void push_record(lua_State *L, const ckt_target_record *r)
{
    lua_pushstring(L, r->name);
    lua_setfield(L, -2, "target");
    lua_pushstring(L, r->arch);
    lua_setfield(L, -2, "arch");
    lua_pushstring(L, ckt_dialect_name(r->dialect));
    lua_setfield(L, -2, "dialect");
    lua_pushstring(L, ckt_compiler_name(r->compiler));
    lua_setfield(L, -2, "compiler");
    lua_pushstring(L, ckt_backend_name(r->runtime));
    lua_setfield(L, -2, "runtime");
    lua_pushboolean(L, r->emulated);
    lua_setfield(L, -2, "emulated");
    if (r->emulated) {
        lua_pushstring(L, r->arch);
        lua_setfield(L, -2, "emulates");
    }
    lua_pushinteger(L, (lua_Integer)r->lds_static_bytes);
    lua_setfield(L, -2, "lds_static_bytes");
    lua_pushinteger(L, (lua_Integer)r->lds_max_bytes);
    lua_setfield(L, -2, "lds_max_bytes");
}

static int l_target(lua_State *L)
{
    const char *name = lua_isnoneornil(L, 1) ? ckt_context_default_target(ckt_l_context(L))
                                             : luaL_checkstring(L, 1);
    ckt_target_record r;
    ckt_target t;
    ckt_error err;
    if (ckt_target_get(name, &t, &err) || ckt_target_parse(name, &r, &err))
        return ckt_l_error(L, &err);
    lua_createtable(L, 0, 20);
    lua_pushstring(L, t.name);
    lua_setfield(L, -2, "name"); /* the modelled GPU */
    push_record(L, &r);
    lua_pushstring(L, t.vendor == CKT_VENDOR_AMD ? "amd" : "nvidia");
    lua_setfield(L, -2, "vendor");
    lua_pushinteger(L, t.wave_size);
    lua_setfield(L, -2, "wave_size");
    lua_pushinteger(L, t.lds_banks);
    lua_setfield(L, -2, "lds_banks");
    lua_pushinteger(L, t.bank_bytes);
    lua_setfield(L, -2, "bank_bytes");
    lua_pushinteger(L, (lua_Integer)t.lds_bytes);
    lua_setfield(L, -2, "lds_bytes");
    lua_pushboolean(L, t.tma);
    lua_setfield(L, -2, "tma"); /* bulk tensor copies and mbarriers (ckt/tma.h) */
    lua_newtable(L);
    const char *m = t.matrix;
    for (int k = 1; m && *m; k++) {
        const char *c = strchr(m, ',');
        lua_pushlstring(L, m, c ? (size_t)(c - m) : strlen(m));
        lua_rawseti(L, -2, k);
        m = c ? c + 1 : NULL;
    }
    lua_setfield(L, -2, "matrix");
    lua_newtable(L);
    for (int i = 0; i < t.ninstr; i++) {
        const ckt_lds_instr *in = &t.instr[i];
        lua_createtable(L, 0, 6);
        lua_pushinteger(L, in->bytes);
        lua_setfield(L, -2, "bytes");
        lua_pushstring(L, in->is_write ? "write" : "read");
        lua_setfield(L, -2, "op");
        lua_pushboolean(L, in->documented);
        lua_setfield(L, -2, "documented");
        lua_pushinteger(L, in->lanes_per_phase);
        lua_setfield(L, -2, "lanes_per_phase");
        lua_pushboolean(L, in->merge_pairs);
        lua_setfield(L, -2, "merge_pairs");
        lua_pushstring(L, in->source);
        lua_setfield(L, -2, "source");
        lua_createtable(L, in->nphases, 0);
        for (int p = 0; p < in->nphases; p++) {
            lua_createtable(L, in->lanes_per_phase, 0);
            for (int k = 0; k < in->lanes_per_phase; k++) {
                lua_pushinteger(L, in->lanes[p][k]);
                lua_rawseti(L, -2, k + 1);
            }
            lua_rawseti(L, -2, p + 1);
        }
        lua_setfield(L, -2, "phases");
        lua_setfield(L, -2, in->name);
    }
    lua_setfield(L, -2, "instructions");
    return 1;
}

void ckt_l_open_target(lua_State *L)
{
    lua_pushcfunction(L, l_target);
    lua_setfield(L, -2, "target");
}
