/* Lua: ckt.target(name) -> the parsed target (ckt/target.h): what it compiles to and runs on,
 * the GPU it compiles for or emulates, and that GPU's hardware model (wave size, LDS banks and
 * instructions, matrix instructions). */
#include <string.h>

#include "ckt/target.h"
#include "l_internal.h"

/* The record's fields (besides the hardware model) into the table at the top. */
static void push_record(lua_State *L, const ckt_target_record *r)
{
    ckt_l_set_string(L, "target", r->name);
    ckt_l_set_string(L, "arch", r->arch);
    ckt_l_set_string(L, "dialect", ckt_dialect_name(r->dialect));
    ckt_l_set_string(L, "compiler", ckt_compiler_name(r->compiler));
    ckt_l_set_string(L, "runtime", ckt_backend_name(r->runtime));
    ckt_l_set_bool(L, "emulated", r->emulated);
    if (r->emulated) { ckt_l_set_string(L, "emulates", r->arch); }
    ckt_l_set_int(L, "lds_static_bytes", r->lds_static_bytes);
    ckt_l_set_int(L, "lds_max_bytes", r->lds_max_bytes);
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
    ckt_l_set_string(L, "name", t.name); /* the modelled GPU */
    push_record(L, &r);
    ckt_l_set_string(L, "vendor", t.vendor == CKT_VENDOR_AMD ? "amd" : "nvidia");
    ckt_l_set_int(L, "wave_size", t.wave_size);
    ckt_l_set_int(L, "lds_banks", t.lds_banks);
    ckt_l_set_int(L, "bank_bytes", t.bank_bytes);
    ckt_l_set_int(L, "lds_bytes", t.lds_bytes);
    ckt_l_set_bool(L, "tma", t.tma); /* bulk tensor copies and mbarriers (ckt/tma.h) */
    ckt_l_push_names(L, t.matrix);
    lua_setfield(L, -2, "matrix");
    lua_newtable(L);
    for (int i = 0; i < t.ninstr; i++) {
        const ckt_lds_instr *in = &t.instr[i];
        lua_createtable(L, 0, 6);
        ckt_l_set_int(L, "bytes", in->bytes);
        ckt_l_set_string(L, "op", in->is_write ? "write" : "read");
        ckt_l_set_bool(L, "documented", in->documented);
        ckt_l_set_int(L, "lanes_per_phase", in->lanes_per_phase);
        ckt_l_set_bool(L, "merge_pairs", in->merge_pairs);
        ckt_l_set_string(L, "source", in->source);
        lua_createtable(L, in->nphases, 0);
        for (int p = 0; p < in->nphases; p++) {
            CKT_L_PUSH_INTS(L, in->lanes[p], in->lanes_per_phase);
            lua_rawseti(L, -2, p + 1);
        }
        lua_setfield(L, -2, "phases");
        lua_setfield(L, -2, in->name);
    }
    lua_setfield(L, -2, "instructions");
    return 1;
}

void ckt_l_open_target(lua_State *L) { ckt_l_set_function(L, "target", l_target); }
