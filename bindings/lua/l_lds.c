/* Lua: the LDS bank model (ckt.lds.*) of a target's hardware model (l_target.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/dtype.h"
#include "ckt/lds.h"
#include "ckt/target.h"
#include "ckt/visual.h"
#include "l_internal.h"

static void get_target(lua_State *L, int t, const char *fn, ckt_target *out)
{
    const char *name = NULL;
    if (!ckt_l_field_string(L, t, fn, "target", &name))
        name = ckt_context_default_target(ckt_l_context(L));
    ckt_error err;
    if (ckt_target_get(name, out, &err)) ckt_l_errorf(L, "%s: %s", fn, err.msg);
}

/* The options table (argument 1) of an analysis: its keys checked, its target's model. */
static void options_and_target(lua_State *L, const char *fn, const char *const *allowed,
                               ckt_target *out)
{
    ckt_l_check_fields(L, 1, fn, allowed);
    get_target(L, 1, fn, out);
}

static int dtype_bytes(lua_State *L, const char *fn, const char *dtype)
{
    size_t b = ckt_dtype_name_bytes(dtype);
    if (b) return (int)b;
    return ckt_l_errorf(L,
                        "%s: unknown dtype '%s' (f16, bf16, f32, i32, u32, i8, u8, f64, i64, fp8, "
                        "or an alias such as half, float)",
                        fn, dtype);
}

static void push_result(lua_State *L, const ckt_lds_result *r)
{
    lua_createtable(L, 0, 4);
    ckt_l_set_int(L, "ways", r->ways);
    ckt_l_set_int(L, "cycles", r->cycles);
    ckt_l_set_int(L, "ideal_cycles", r->ideal_cycles);
    lua_createtable(L, r->nphases, 0);
    for (int p = 0; p < r->nphases; p++) {
        const ckt_lds_phase_result *ph = &r->phases[p];
        lua_createtable(L, 0, 3);
        CKT_L_PUSH_INTS(L, ph->lanes, ph->nlanes);
        lua_setfield(L, -2, "lanes");
        CKT_L_PUSH_INTS(L, ph->bank, ph->nlanes);
        lua_setfield(L, -2, "banks");
        ckt_l_set_int(L, "ways", ph->ways);
        lua_rawseti(L, -2, p + 1);
    }
    lua_setfield(L, -2, "phases");
}

/* A text report: one line per phase, lanes -> banks. */
static void push_report(lua_State *L, const ckt_target *t, const char *instr,
                        const ckt_lds_result *r)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "%s on %s: %d cycles for %d ideal (%d-way worst)\n", instr, t->name,
                    r->cycles, r->ideal_cycles, r->ways);
    luaL_addvalue(&b);
    for (int p = 0; p < r->nphases; p++) {
        const ckt_lds_phase_result *ph = &r->phases[p];
        lua_pushfstring(L, "  phase %d (%d-way):", p, ph->ways);
        luaL_addvalue(&b);
        for (int k = 0; k < ph->nlanes; k++) {
            lua_pushfstring(L, " L%d>B%d", ph->lanes[k], ph->bank[k]);
            luaL_addvalue(&b);
        }
        luaL_addchar(&b, '\n');
    }
    luaL_pushresult(&b);
}

/* SVG of lanes x banks: a lane's row marks every bank its access touches (1 for 32-bit and
 * narrower, 2 or 4 consecutive banks for 64/128-bit) with its phase number. */
static void push_svg(lua_State *L, const ckt_target *t, const char *title, const ckt_lds_result *r,
                     int access_bytes)
{
    int64_t rows = t->wave_size, cols = t->lds_banks;
    int words = access_bytes > t->bank_bytes ? access_bytes / t->bank_bytes : 1;
    int64_t *v = lua_newuserdatauv(L, sizeof(int64_t) * (size_t)(rows * cols), 0);
    const char **labels = lua_newuserdatauv(L, sizeof(char *) * (size_t)(rows * cols), 0);
    char *text = lua_newuserdatauv(L, (size_t)(rows * cols) * 16, 0);
    for (int64_t i = 0; i < rows * cols; i++) {
        v[i] = -1;
        labels[i] = "";
    }
    for (int p = 0; p < r->nphases; p++)
        for (int k = 0; k < r->phases[p].nlanes; k++)
            for (int w = 0; w < words; w++) {
                int64_t c = r->phases[p].lanes[k] * cols + (r->phases[p].bank[k] + w) % cols;
                v[c] = p;
                snprintf(text + c * 16, 16, "P%d", p);
                labels[c] = text + c * 16;
            }
    char head[160];
    snprintf(head, sizeof head,
             "%s on %s: lanes (rows) x banks (columns), P = phase; %d cycles for %d ideal, %d-way",
             title, t->name, r->cycles, r->ideal_cycles, r->ways);
    ckt_cells cells = {rows, cols, v, labels, head};
    ckt_error err;
    char *s = ckt_render_svg(&cells, &err);
    lua_pop(L, 3);
    if (!s) {
        ckt_l_error(L, &err);
        return;
    }
    lua_pushstring(L, s);
    free(s);
}

static int l_analyze(lua_State *L)
{
    static const char *const fn = "lds.analyze";
    static const char *const allowed[] = {"target", "instr", "addresses", "svg", NULL};
    ckt_target t;
    options_and_target(L, fn, allowed, &t);
    const char *iname;
    if (!ckt_l_field_string(L, 1, fn, "instr", &iname))
        return ckt_l_argerror(L, 1, "field 'instr' is required");
    const ckt_lds_instr *in = ckt_target_instr(&t, iname);
    if (!in) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int i = 0; i < t.ninstr; i++) {
            if (i) luaL_addstring(&b, ", ");
            luaL_addstring(&b, t.instr[i].name);
        }
        luaL_pushresult(&b);
        return ckt_l_errorf(L, "%s: unknown instruction '%s' on %s (known: %s, read_bN, write_bN)",
                            fn, iname, t.name, lua_tostring(L, -1));
    }
    if (lua_getfield(L, 1, "addresses") != LUA_TTABLE)
        return ckt_l_argerror(L, 1,
                              "field 'addresses' must be a table of one byte address per lane");
    int at = lua_gettop(L);
    lua_Integer n = luaL_len(L, at);
    if (n > t.wave_size)
        return ckt_l_errorf(L, "%s: %d addresses, more than the %d lanes of %s", fn, (int)n,
                            t.wave_size, t.name);
    int64_t addr[CKT_MAX_LANES];
    for (int l = 0; l < t.wave_size; l++) {
        int ty = lua_geti(L, at, l + 1);
        if (ty == LUA_TNIL || (ty == LUA_TBOOLEAN && !lua_toboolean(L, -1)))
            addr[l] = -1; /* inactive lane */
        else {
            char what[64];
            snprintf(what, sizeof what, "%s: address of lane %d", fn, l);
            addr[l] = ckt_l_checkint(L, -1, what);
            if (addr[l] < 0)
                return ckt_l_errorf(L, "%s: address %lld of lane %d is negative", fn,
                                    (long long)addr[l], l);
        }
        lua_pop(L, 1);
    }
    ckt_lds_result r;
    ckt_error err;
    if (ckt_lds_analyze(&t, in, addr, t.wave_size, &r, &err)) return ckt_l_error(L, &err);
    push_result(L, &r);
    push_report(L, &t, in->name, &r);
    lua_setfield(L, -2, "report");
    int svg = 0;
    ckt_l_field_bool(L, 1, fn, "svg", &svg);
    if (svg) {
        push_svg(L, &t, in->name, &r, in->bytes);
        lua_setfield(L, -2, "svg");
    }
    return 1;
}

/* A tensor layout: a layout, or a composed (swizzled) layout. */
static void to_lds_tensor(lua_State *L, int idx, const char *fn, ckt_lds_tensor *lt)
{
    memset(lt, 0, sizeof *lt);
    ckt_composed *c = luaL_testudata(L, idx, CKT_L_COMPOSED);
    if (c) {
        lt->layout = c->inner;
        lt->sw = c->sw;
        lt->sw_offset = c->offset;
        return;
    }
    char what[64];
    snprintf(what, sizeof what, "%s: tensor_layout", fn);
    ckt_l_tolayout(L, idx, what, &lt->layout);
}

static void analyze_one(lua_State *L, const ckt_target *t, const ckt_lds_tensor *lt, int spec,
                        int is_write, const char *fn, ckt_lds_tensor_result *r)
{
    char what[64];
    snprintf(what, sizeof what, "%s: thread_map", fn);
    lua_getfield(L, spec, "thread_map");
    ckt_layout tm;
    ckt_l_tolayout(L, -1, what, &tm);
    lua_pop(L, 1);
    int64_t vector = 1;
    ckt_l_field_int(L, spec, fn, "vector", &vector);
    ckt_error err;
    if (ckt_lds_analyze_tensor(t, lt, &tm, vector, is_write, r, &err)) ckt_l_error(L, &err);
}

static void push_tensor_result(lua_State *L, const ckt_target *t, const ckt_lds_tensor_result *r)
{
    push_result(L, &r->first_worst);
    ckt_l_set_int(L, "ways", r->ways);
    ckt_l_set_int(L, "cycles", r->cycles);
    ckt_l_set_int(L, "ideal_cycles", r->ideal_cycles);
    ckt_l_set_int(L, "instructions", r->instructions);
    ckt_l_set_string(L, "instr", r->instr ? r->instr : "");
    ckt_l_set_int(L, "access_bytes", r->access_bytes);
    push_report(L, t, "worst instruction", &r->first_worst);
    lua_pushfstring(L, "%d instructions: %d cycles for %d ideal (%d-way worst)\n%s",
                    r->instructions, r->cycles, r->ideal_cycles, r->ways, lua_tostring(L, -1));
    lua_remove(L, -2);
    lua_setfield(L, -2, "report");
}

static int l_analyze_tensor(lua_State *L)
{
    static const char *const fn = "lds.analyze_tensor";
    static const char *const allowed[] = {
        "target", "tensor_layout", "dtype", "thread_map", "vector", "op", "svg", NULL};
    ckt_target t;
    options_and_target(L, fn, allowed, &t);
    ckt_lds_tensor lt;
    lua_getfield(L, 1, "tensor_layout");
    to_lds_tensor(L, -1, fn, &lt);
    lua_pop(L, 1);
    const char *dtype = "f16", *op = "read";
    ckt_l_field_string(L, 1, fn, "dtype", &dtype);
    ckt_l_field_string(L, 1, fn, "op", &op);
    if (strcmp(op, "read") && strcmp(op, "write"))
        return ckt_l_errorf(L, "%s: op must be \"read\" or \"write\", got \"%s\"", fn, op);
    lt.elem_bytes = dtype_bytes(L, fn, dtype);
    ckt_lds_tensor_result r;
    analyze_one(L, &t, &lt, 1, op[0] == 'w', fn, &r);
    push_tensor_result(L, &t, &r);
    int svg = 0;
    ckt_l_field_bool(L, 1, fn, "svg", &svg);
    if (svg) {
        push_svg(L, &t, "worst instruction", &r.first_worst, r.access_bytes);
        lua_setfield(L, -2, "svg");
    }
    return 1;
}

static int l_pad(lua_State *L)
{
    ckt_layout l, out;
    ckt_l_tolayout(L, 1, "layout", &l);
    int64_t banks = ckt_l_checkint(L, 2, "banks");
    if (banks < 0 || banks > 1024)
        return ckt_l_errorf(L, "lds.pad: banks %lld must be in [0, 1024]", (long long)banks);
    const char *dtype = luaL_optstring(L, 3, "f16");
    int eb = dtype_bytes(L, "lds.pad", dtype);
    ckt_error err;
    if (ckt_lds_pad(&l, (int)banks, 4, eb, &out, &err)) return ckt_l_error(L, &err);
    ckt_l_pushlayout(L, &out);
    lua_pushinteger(L, (lua_Integer)((ckt_layout_cosize(&out) - ckt_layout_cosize(&l)) *
                                     eb)); /* the LDS cost in bytes */
    return 2;
}

static void push_composed(lua_State *L, ckt_swizzle sw, const ckt_layout *l)
{
    ckt_composed *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->sw = sw;
    u->offset = 0;
    u->inner = *l;
    luaL_setmetatable(L, CKT_L_COMPOSED);
}

/* ckt.lds.xor_preshuffle(k_per_block, k_pack [, rows]) -> composed layout over (rows, KPerBlock)
 * row-major */
static int l_xor_preshuffle(lua_State *L)
{
    int64_t k = ckt_l_checkint(L, 1, "k_per_block"), p = ckt_l_checkint(L, 2, "k_pack");
    ckt_swizzle sw;
    ckt_error err;
    if (ckt_lds_xor_preshuffle(k, p, &sw, &err)) return ckt_l_error(L, &err);
    int64_t rows = ckt_l_optint(L, 3, "rows", k / p);
    if (rows <= 0)
        return ckt_l_errorf(L, "lds.xor_preshuffle: rows %lld must be positive", (long long)rows);
    int64_t shape[2] = {rows, k}, stride[2] = {k, 1};
    ckt_layout l;
    if (ckt_layout_flat(&l, 2, shape, stride, &err)) return ckt_l_error(L, &err);
    push_composed(L, sw, &l);
    return 1;
}

/* {lo, hi} into *lo, *hi (absent: unchanged). */
static void field_range(lua_State *L, int t, const char *fn, const char *field, int *lo, int *hi)
{
    if (lua_getfield(L, t, field) == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    char what[64];
    snprintf(what, sizeof what, "%s: %s", fn, field);
    int64_t v[2];
    if (!lua_istable(L, -1) || ckt_l_int_list(L, -1, what, v, 2) != 2) {
        ckt_l_errorf(L, "%s must be a range {min, max}", what);
        return;
    }
    if (v[0] < -1000 || v[0] > 1000 || v[1] < -1000 || v[1] > 1000) {
        ckt_l_errorf(L, "%s: {%lld, %lld} is out of range", what, (long long)v[0], (long long)v[1]);
        return;
    }
    *lo = (int)v[0];
    *hi = (int)v[1];
    lua_pop(L, 1);
}

/* write= / read= {thread_map=, vector=}; false when absent. */
static bool get_pattern(lua_State *L, int t, const char *fn, const char *field, ckt_lds_pattern *p)
{
    int ty = lua_getfield(L, t, field);
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        return false;
    }
    if (ty != LUA_TTABLE) {
        ckt_l_argerror(L, t, "field '%s' must be {thread_map=, vector=}, got %s", field,
                       luaL_typename(L, -1));
        return false;
    }
    /* the spec is at the top (-1): a table inside argument t, named in errors by `what` */
    static const char *const allowed[] = {"thread_map", "vector", NULL};
    char what[64];
    snprintf(what, sizeof what, "%s: %s", fn, field);
    ckt_l_check_fields(L, -1, what, allowed);
    lua_getfield(L, -1, "thread_map");
    snprintf(what, sizeof what, "%s: %s.thread_map", fn, field);
    ckt_l_tolayout(L, -1, what, &p->thread_map);
    lua_pop(L, 1);
    p->vector = 1;
    snprintf(what, sizeof what, "%s: %s", fn, field);
    ckt_l_field_int(L, -1, what, "vector", &p->vector);
    lua_pop(L, 1);
    return true;
}

/* Search swizzles Sw<B,M,S> and row paddings for a write pattern and a read pattern (lds_search.c).
 */
static int l_find_swizzle(lua_State *L)
{
    static const char *const fn = "lds.find_swizzle";
    static const char *const allowed[] = {
        "target", "layout", "dtype", "write", "read", "max_padding_banks", "B", "M", "S", NULL};
    ckt_target t;
    options_and_target(L, fn, allowed, &t);
    ckt_layout base;
    lua_getfield(L, 1, "layout");
    ckt_l_tolayout(L, -1, "lds.find_swizzle: layout", &base);
    lua_pop(L, 1);
    const char *dtype = "f16";
    ckt_l_field_string(L, 1, fn, "dtype", &dtype);
    int eb = dtype_bytes(L, fn, dtype);
    ckt_lds_search_opts o;
    ckt_lds_search_defaults(&o);
    int64_t max_pad = o.max_padding_banks;
    ckt_l_field_int(L, 1, fn, "max_padding_banks", &max_pad);
    if (max_pad < 0 || max_pad > 1024)
        return ckt_l_errorf(L, "%s: max_padding_banks %lld must be in [0, 1024]", fn,
                            (long long)max_pad);
    o.max_padding_banks = (int)max_pad;
    field_range(L, 1, fn, "B", &o.b_min, &o.b_max);
    field_range(L, 1, fn, "M", &o.m_min, &o.m_max);
    field_range(L, 1, fn, "S", &o.s_min, &o.s_max);
    ckt_lds_pattern w, r;
    bool hw = get_pattern(L, 1, fn, "write", &w), hr = get_pattern(L, 1, fn, "read", &r);
    if (!hw && !hr)
        return ckt_l_errorf(L, "%s: give write={thread_map=, vector=}, read={...} or both", fn);
    ckt_lds_choice c;
    ckt_error err;
    if (ckt_lds_find_swizzle(&t, &base, eb, hw ? &w : NULL, hr ? &r : NULL, &o, &c, &err))
        return ckt_l_error(L, &err);
    lua_createtable(L, 0, 10);
    if (c.tensor.sw.b > 0) {
        ckt_l_push_value(L, CKT_L_SWIZZLE, &c.tensor.sw, sizeof c.tensor.sw);
        lua_setfield(L, -2, "swizzle");
        push_composed(L, c.tensor.sw, &c.tensor.layout);
    } else {
        ckt_l_pushlayout(L, &c.tensor.layout);
    }
    lua_setfield(L, -2, "layout");
    ckt_l_set_int(L, "padding_banks", c.padding_banks);
    ckt_l_set_int(L, "lds_bytes", c.lds_bytes);
    ckt_l_set_int(L, "lds_extra_bytes", c.lds_extra_bytes);
    ckt_l_set_bool(L, "conflict_free", c.conflict_free);
    ckt_l_set_int(L, "candidates", c.candidates);
    if (hw) {
        push_tensor_result(L, &t, &c.write);
        lua_setfield(L, -2, "write");
    }
    if (hr) {
        push_tensor_result(L, &t, &c.read);
        lua_setfield(L, -2, "read");
    }
    return 1;
}

void ckt_l_open_lds(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_MODULE, "analyze", l_analyze},
                                       {CKT_L_MODULE, "analyze_tensor", l_analyze_tensor},
                                       {CKT_L_MODULE, "pad", l_pad},
                                       {CKT_L_MODULE, "xor_preshuffle", l_xor_preshuffle},
                                       {CKT_L_MODULE, "find_swizzle", l_find_swizzle},
                                       {NULL, NULL, NULL}};
    lua_newtable(L); /* ckt.lds */
    ckt_l_register(L, rows);
    lua_setfield(L, -2, "lds");
    /* these topics follow the options added here (they win over l_help.c's built-in texts) */
    ckt_l_help_add(L, "lds.analyze_tensor",
                   "ckt.lds.analyze_tensor{target=, tensor_layout=, dtype=\"f16\", thread_map=, "
                   "vector=1, op=\"read\", svg=false}:\n"
                   "a whole tile access; thread_map maps (thread, value) to the tile index of the "
                   "first element of each\n"
                   "vector (contiguous in memory); vector x dtype = 1, 2, 4, 8 or 16 bytes per "
                   "lane. -> {ways, cycles,\n"
                   "ideal_cycles, instructions, instr, access_bytes, phases (worst instruction), "
                   "report [, svg]}.");
    ckt_l_help_add(
        L, "lds.find_swizzle",
        "ckt.lds.find_swizzle{target=, layout=, dtype=, write={thread_map=, vector=}, read={...},\n"
        "  B={1,4}, M={0,5}, S={1,8}, max_padding_banks=8}: the plain layout, then swizzles "
        "Sw<B,M,S>, then\n"
        "paddings; the conflict-free choice of least LDS, or the fewest cycles found -> {layout, "
        "swizzle,\n"
        "padding_banks, lds_bytes, lds_extra_bytes, conflict_free, candidates, write, read}. write "
        "or read may be omitted.");
}
