/* Lua: ckt.target(name) -> the parsed target (ckt/target.h): what it compiles to and runs on,
 * the GPU it compiles for or emulates, and that GPU's hardware model (wave size, LDS banks and
 * instructions, matrix instructions; .hw: capabilities and the resources of an SM / CU).
 * ckt.occupancy(target, {threads=, registers=, lds_bytes=}) -> blocks_per_sm, limiter. */
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

/* The hardware model's capabilities and resources (ckt_target: one field each) into t.hw. */
static void push_hw(lua_State *L, const ckt_target *t)
{
    lua_createtable(L, 0, 20);
    ckt_l_set_string(L, "name", t->name);
    ckt_l_set_string(L, "vendor", t->vendor == CKT_VENDOR_AMD ? "amd" : "nvidia");
    ckt_l_set_int(L, "wave_size", t->wave_size);
    ckt_l_set_bool(L, "tma", t->tma);
    ckt_l_set_bool(L, "wgmma", t->wgmma);
    ckt_l_set_bool(L, "stmatrix", t->stmatrix);
    ckt_l_set_int(L, "sm_count", t->sm_count);
    ckt_l_set_int(L, "simds", t->simds);
    ckt_l_set_int(L, "regs_per_sm", t->regs_per_sm);
    ckt_l_set_int(L, "regs_per_thread_max", t->regs_per_thread_max);
    ckt_l_set_int(L, "reg_granule", t->reg_granule);
    ckt_l_set_int(L, "lds_per_sm", t->lds_per_sm);
    ckt_l_set_int(L, "lds_per_block", t->lds_per_block);
    ckt_l_set_int(L, "lds_reserved", t->lds_reserved);
    ckt_l_set_int(L, "threads_per_sm_max", t->threads_per_sm_max);
    ckt_l_set_int(L, "threads_per_block_max", t->threads_per_block_max);
    ckt_l_set_int(L, "blocks_per_sm_max", t->blocks_per_sm_max);
    ckt_l_set_int(L, "max_waves", t->max_waves);
    ckt_l_set_int(L, "reg_file", t->reg_file);
    lua_setfield(L, -2, "hw");
}

/* The modelled target named by argument `arg` (nil: the context's default target). */
static void check_modelled(lua_State *L, int arg, ckt_target_record *r)
{
    const char *name = lua_isnoneornil(L, arg) ? ckt_context_default_target(ckt_l_context(L))
                                               : luaL_checkstring(L, arg);
    ckt_error err;
    if (ckt_target_parse(name, r, &err)) ckt_l_error(L, &err);
    if (!r->modelled)
        luaL_error(L, "target: unknown target '%s'; known: %s", name, ckt_target_names());
}

static int l_target(lua_State *L)
{
    ckt_target_record r;
    check_modelled(L, 1, &r);
    const ckt_target t = r.hw;
    lua_createtable(L, 0, 21);
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
    push_hw(L, &t);
    return 1;
}

/* ckt.occupancy(target, {threads=, registers=, lds_bytes=}) -> blocks_per_sm, limiter */
static int l_occupancy(lua_State *L)
{
    static const char *const allowed[] = {"threads", "registers", "lds_bytes", NULL};
    ckt_target_record r;
    if (lua_isnoneornil(L, 1)) return ckt_l_argerror(L, 1, "target name expected, got no value");
    check_modelled(L, 1, &r);
    luaL_checktype(L, 2, LUA_TTABLE);
    ckt_l_check_fields(L, 2, "occupancy", allowed);
    int64_t threads = 0, registers = 0, lds = 0;
    if (!ckt_l_field_int(L, 2, "occupancy", "threads", &threads))
        return ckt_l_argerror(L, 2, "field 'threads' is required");
    ckt_l_field_int(L, 2, "occupancy", "registers", &registers);
    ckt_l_field_int(L, 2, "occupancy", "lds_bytes", &lds);
    ckt_occupancy o;
    ckt_error err;
    if (ckt_target_occupancy(&r, threads, registers, lds, &o, &err)) return ckt_l_error(L, &err);
    lua_pushinteger(L, o.blocks_per_sm);
    lua_pushstring(L, ckt_limiter_name(o.limiter));
    return 2;
}

void ckt_l_open_target(lua_State *L)
{
    ckt_l_set_function(L, "target", l_target);
    ckt_l_set_function(L, "occupancy", l_occupancy);
}
