/* ckt Lua bindings — matrix instructions and the CK wrapper's blockwise GEMM pieces (DESIGN 3.6,
 * 3.7; the CK wrapper GEMM tutorial):
 *   ckt.mma(name) -> the instruction's description (shape, dtypes, lanes, lane layouts, grid(op))
 *   ckt.mma_list([target]), ckt.mma_find{target=, a=, b=, c=, m=, n=, k=}
 *   ckt.gemm_traits{instr=, m_per_wave=, n_per_wave=, k_pack=} or ckt.gemm_traits(preset, dtype)
 *   b:make_blockwise_gemm_xdl_c_vgpr(a_tile, b_tile, traits) -> the C register tensor (f32)
 *   ckt.make_blockwise_gemm_xdl_c_local_partition(c_tile, traits) -> the C partition of a window
 *   b:blockwise_gemm(a_lds, b_lds, c_vgpr, traits) (also b:blockwise_gemm_xdl)
 * Everything here checks Lua arguments and calls the engine (ckt/mma.h, ckt/gemm.h). */
#include <string.h>

#include "ckt/gemm.h"
#include "ckt/mma.h"
#include "l_kernel.h"

#define CKT_L_MMA "ckt.mma"
#define CKT_L_TRAITS "ckt.gemm_traits"

/* ---------------------------------------------------------------- kernel objects */

static ckt_kernel *builder(lua_State *L, int idx, const char *fn)
{
    l_kernel *kb = ckt_lk_checkkernel(L, idx);
    ckt_lk_require_building(L, kb, fn);
    return kb->k;
}

/* A tensor of kernel *k (NULL: any kernel being built, stored into *k): its index. */
static int kernel_tensor(lua_State *L, int idx, ckt_kernel **k, const char *what)
{
    l_kobj *t = ckt_lk_checktensor(L, idx, what);
    ckt_lk_require_building(L, t->kb, what);
    if (*k && t->kb->k != *k)
        return ckt_l_argerror(L, idx, "%s: the tensor belongs to another kernel", what);
    *k = t->kb->k;
    return t->id;
}

static int kernel_window(lua_State *L, int idx, ckt_kernel **k, const char *what)
{
    l_kobj *w = ckt_lk_checkwindow(L, idx, what);
    if (w->part) return ckt_l_argerror(L, idx, "%s: tile window expected, got a partition", what);
    if (*k && w->kb->k != *k)
        return ckt_l_argerror(L, idx, "%s: the window belongs to another kernel", what);
    *k = w->kb->k;
    return w->id;
}

/* A new object of the kernel that owns the object (or is the builder) at `owner`. */
static l_kobj *push_object(lua_State *L, int owner, const char *tname, int id)
{
    if (luaL_testudata(L, owner, CKT_L_KERNEL))
        lua_pushvalue(L, owner);
    else
        ckt_lk_push_owner(L, owner);
    l_kobj *o = ckt_lk_newobj(L, ckt_lk_checkkernel(L, -1), -1, tname, id);
    lua_remove(L, -2);
    return o;
}

/* ---------------------------------------------------------------- ckt.mma */

static const ckt_mma *checkmma(lua_State *L, int idx)
{
    return *(const ckt_mma **)luaL_checkudata(L, idx, CKT_L_MMA);
}

static void push_mma(lua_State *L, const ckt_mma *m)
{
    ckt_l_push_value(L, CKT_L_MMA, &m, sizeof m);
}

/* An instruction given as a ckt.mma or by name. */
static const ckt_mma *tomma(lua_State *L, int idx, const char *what)
{
    if (luaL_testudata(L, idx, CKT_L_MMA)) return checkmma(L, idx);
    int arg = idx > 0 ? idx : 0;
    if (lua_type(L, idx) != LUA_TSTRING)
        ckt_l_argerror(L, arg, "%s must be an instruction name or ckt.mma, got %s", what,
                       luaL_typename(L, idx));
    const ckt_mma *m;
    ckt_error err;
    if (ckt_mma_get(lua_tostring(L, idx), &m, &err))
        ckt_l_argerror(L, arg, "%s: %s", what, err.msg);
    return m;
}

/* ckt.mma(name) */
static int l_mma(lua_State *L)
{
    luaL_checkany(L, 1);
    push_mma(L, tomma(L, 1, "name"));
    return 1;
}

static char checkoperand(lua_State *L, int idx)
{
    const char *s = luaL_checkstring(L, idx);
    char o = s[0] >= 'a' && s[0] <= 'z' ? (char)(s[0] - 'a' + 'A') : s[0];
    if (strlen(s) != 1 || (o != 'A' && o != 'B' && o != 'C' && o != 'D'))
        ckt_l_argerror(L, idx, "operand must be \"A\", \"B\" or \"C\" (\"D\"), got \"%s\"", s);
    return o == 'D' ? 'C' : o;
}

static int m_layout(lua_State *L)
{
    const ckt_mma *m = checkmma(L, 1);
    ckt_layout tv;
    ckt_error err;
    if (ckt_mma_layout(m, checkoperand(L, 2), &tv, &err)) return ckt_l_error(L, &err);
    ckt_l_pushlayout(L, &tv);
    return 1;
}

static int m_draw(lua_State *L)
{
    int svg = ckt_l_svg(L);
    const ckt_mma *m = checkmma(L, 1);
    char o = checkoperand(L, 2);
    int opts = ckt_l_draw_opts(L, 3, svg, NULL);
    ckt_layout tv;
    ckt_error err;
    if (ckt_mma_layout(m, o, &tv, &err)) return ckt_l_error(L, &err);
    int64_t rows, cols;
    ckt_mma_operand_shape(m, o, &rows, &cols);
    lua_pushfstring(L, "%s %c (%dx%d row-major, %d lanes x %d values): T = lane, V = value",
                    m->name, o, (int)rows, (int)cols, (int)m->lanes,
                    (int)(o == 'A'   ? m->a_values
                          : o == 'B' ? m->b_values
                                     : m->c_values));
    return ckt_l_draw_tv(L, &tv, rows, cols, lua_tostring(L, -1), svg, opts);
}

/* a target name parsed once; NULL when it names no target (an instruction is on none) */
static const ckt_target_record *parse_or_null(const char *name, ckt_target_record *r)
{
    return ckt_target_parse(name, r, NULL) == CKT_OK ? r : NULL;
}

static int m_has(lua_State *L)
{
    ckt_target_record r;
    const ckt_mma *m = checkmma(L, 1);
    lua_pushboolean(L, ckt_mma_on_target(m, parse_or_null(luaL_checkstring(L, 2), &r)));
    return 1;
}

static int m_index(lua_State *L)
{
    const ckt_mma *m = checkmma(L, 1);
    const char *k = lua_tostring(L, 2);
    const ckt_l_int_field ints[] = {{"m", m->m},
                                    {"n", m->n},
                                    {"k", m->k},
                                    {"lanes", m->lanes},
                                    {"a_values", m->a_values},
                                    {"b_values", m->b_values},
                                    {"c_values", m->c_values},
                                    {"k_chunk", m->k_chunk}};
    const ckt_l_str_field strs[] = {{"name", m->name},
                                    {"isa", m->isa},
                                    {"intrinsic", m->intrinsic},
                                    {"doc", m->doc},
                                    {"vendor", m->vendor == CKT_VENDOR_AMD ? "amd" : "nvidia"},
                                    {"a", ckt_dtype_name(m->a)},
                                    {"b", ckt_dtype_name(m->b)},
                                    {"c", ckt_dtype_name(m->c)},
                                    {"emulation", m->emulation}};
    if (ckt_l_push_int_field(L, k, ints, sizeof ints / sizeof *ints) ||
        ckt_l_push_str_field(L, k, strs, sizeof strs / sizeof *strs))
        return 1;
    if (k) {
        if (!strcmp(k, "targets")) {
            char t[128];
            ckt_l_push_names(L, ckt_mma_targets(m, t, sizeof t));
            return 1;
        }
        if (!strcmp(k, "ldmatrix")) {
            lua_pushboolean(L, m->ldmatrix);
            return 1;
        }
        if (!strcmp(k, "shape")) {
            int64_t v[3] = {m->m, m->n, m->k};
            ckt_l_push_int_list(L, v, 3);
            return 1;
        }
    }
    return ckt_l_index_method(L, CKT_L_MMA);
}

static int m_tostring(lua_State *L)
{
    const ckt_mma *m = checkmma(L, 1);
    char targets[128];
    lua_pushfstring(L,
                    "%s (%s): %dx%dx%d, A %s, B %s, C %s, %d lanes; on %s\n  %s\n  A %s  B %s  C "
                    "%s  (lane, value) -> row-major offset",
                    m->name, m->isa, (int)m->m, (int)m->n, (int)m->k, ckt_dtype_name(m->a),
                    ckt_dtype_name(m->b), ckt_dtype_name(m->c), (int)m->lanes,
                    ckt_mma_targets(m, targets, sizeof targets), m->doc, m->a_tv, m->b_tv, m->c_tv);
    return 1;
}

/* ckt.mma_list([target]) -> names */
static int l_mma_list(lua_State *L)
{
    const char *target = luaL_optstring(L, 1, NULL);
    ckt_target_record r;
    const ckt_target_record *rec = target ? parse_or_null(target, &r) : NULL;
    lua_newtable(L);
    int n = 0;
    for (int i = 0; ckt_mma_at(i); i++)
        if (!target || ckt_mma_on_target(ckt_mma_at(i), rec)) {
            lua_pushstring(L, ckt_mma_at(i)->name);
            lua_rawseti(L, -2, ++n);
        }
    return 1;
}

/* ckt.mma_find{target=, a=, b=, c=, m=, n=, k=} */
static int l_mma_find(lua_State *L)
{
    static const char *const allowed[] = {"target", "a", "b", "c", "m", "n", "k", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    ckt_l_check_fields(L, 1, "mma_find", allowed);
    const char *target = NULL;
    if (!ckt_l_field_string(L, 1, "mma_find", "target", &target))
        return ckt_l_argerror(L, 1, "field 'target' is required");
    ckt_dtype dt[3] = {CKT_F16, CKT_F16, CKT_F32};
    const char *keys[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        if (lua_getfield(L, 1, keys[i]) != LUA_TNIL) {
            char what[40];
            snprintf(what, sizeof what, "mma_find: field '%s'", keys[i]);
            dt[i] = ckt_l_checkdtype(L, -1, what);
        } else if (i == 1) {
            dt[1] = dt[0];
        }
        lua_pop(L, 1);
    }
    int64_t m = 0, n = 0, k = 0;
    ckt_l_field_int(L, 1, "mma_find", "m", &m);
    ckt_l_field_int(L, 1, "mma_find", "n", &n);
    ckt_l_field_int(L, 1, "mma_find", "k", &k);
    const ckt_mma *x;
    ckt_error err;
    ckt_target_record r;
    if (ckt_target_parse(target, &r, &err) ||
        ckt_mma_find(&r, dt[0], dt[1], dt[2], m, n, k, &x, &err))
        return ckt_l_error(L, &err);
    push_mma(L, x);
    return 1;
}

/* ---------------------------------------------------------------- ckt.gemm_traits */

static const ckt_gemm_traits *checktraits(lua_State *L, int idx, const char *what)
{
    return ckt_l_checkclass(L, idx, CKT_L_TRAITS, "GEMM traits (ckt.gemm_traits)", what);
}

/* ckt.gemm_traits{instr=, m_per_wave=, n_per_wave=, k_pack=} | ckt.gemm_traits(preset, dtype) */
static int l_gemm_traits(lua_State *L)
{
    ckt_gemm_traits t;
    ckt_error err;
    if (lua_type(L, 1) == LUA_TSTRING) {
        ckt_dtype dt = lua_isnoneornil(L, 2) ? CKT_F16 : ckt_l_checkdtype(L, 2, "dtype");
        if (ckt_gemm_traits_preset(lua_tostring(L, 1), dt, &t, &err)) return ckt_l_error(L, &err);
    } else {
        static const char *const allowed[] = {"instr", "m_per_wave", "n_per_wave", "k_pack", NULL};
        if (!lua_istable(L, 1))
            return ckt_l_argerror(L, 1,
                                  "table {instr=, m_per_wave=, n_per_wave=, k_pack=} or CK preset "
                                  "name expected, got %s",
                                  luaL_typename(L, 1));
        ckt_l_check_fields(L, 1, "gemm_traits", allowed);
        lua_getfield(L, 1, "instr");
        if (lua_isnil(L, -1))
            return ckt_l_argerror(
                L, 1, "field 'instr' is required (a matrix instruction name, see ckt.mma_list())");
        const ckt_mma *m = tomma(L, -1, "gemm_traits: field 'instr'");
        lua_pop(L, 1);
        int64_t mx = 1, nx = 1, kp = 0;
        ckt_l_field_int(L, 1, "gemm_traits", "m_per_wave", &mx);
        ckt_l_field_int(L, 1, "gemm_traits", "n_per_wave", &nx);
        ckt_l_field_int(L, 1, "gemm_traits", "k_pack", &kp);
        if (ckt_gemm_traits_make(m->name, mx, nx, kp, &t, &err)) return ckt_l_error(L, &err);
    }
    ckt_l_push_value(L, CKT_L_TRAITS, &t, sizeof t);
    return 1;
}

static int t_index(lua_State *L)
{
    const ckt_gemm_traits *t = checktraits(L, 1, NULL);
    const char *k = lua_tostring(L, 2);
    const ckt_l_int_field ints[] = {
        {"m_per_wave", t->m_per_wave}, {"n_per_wave", t->n_per_wave}, {"k_pack", t->k_pack}};
    if (k && !strcmp(k, "instr")) {
        push_mma(L, t->instr);
        return 1;
    }
    if (ckt_l_push_int_field(L, k, ints, sizeof ints / sizeof *ints)) return 1;
    return ckt_l_index_method(L, CKT_L_TRAITS);
}

static int t_tostring(lua_State *L)
{
    const ckt_gemm_traits *t = checktraits(L, 1, NULL);
    lua_pushfstring(L, "ckt.gemm_traits(%s, %dx%d per wave, k_pack %d)", t->instr->name,
                    (int)t->m_per_wave, (int)t->n_per_wave, (int)t->k_pack);
    return 1;
}

/* T:geometry(MPerBlock, NPerBlock, KPerBlock, threads) -> {waves_m=, waves_n=, k_step=, pack=} */
static ckt_gemm_geom geometry_args(lua_State *L, const ckt_gemm_traits *t, int first)
{
    int64_t mpb = ckt_l_checkint(L, first, "MPerBlock"),
            npb = ckt_l_checkint(L, first + 1, "NPerBlock");
    int64_t kpb = ckt_l_checkint(L, first + 2, "KPerBlock"),
            threads = ckt_l_checkint(L, first + 3, "threads");
    ckt_gemm_geom g;
    ckt_error err;
    if (ckt_gemm_geometry(t, mpb, npb, kpb, threads, &g, &err)) ckt_l_error(L, &err);
    return g;
}

static int t_geometry(lua_State *L)
{
    ckt_gemm_geom g = geometry_args(L, checktraits(L, 1, NULL), 2);
    lua_createtable(L, 0, 4);
    ckt_l_set_int(L, "waves_m", g.waves_m);
    ckt_l_set_int(L, "waves_n", g.waves_n);
    ckt_l_set_int(L, "k_step", g.k_step);
    ckt_l_set_int(L, "pack", g.pack);
    return 1;
}

/* T:tv(operand, MPerBlock, NPerBlock, KPerBlock, threads) -> the block-level TV layout of the
 * operand ('A' over MPerBlock x k_step, 'B' over NPerBlock x k_step, 'C' over MPerBlock x
 * NPerBlock) */
static int t_tv(lua_State *L)
{
    const ckt_gemm_traits *t = checktraits(L, 1, NULL);
    char o = checkoperand(L, 2);
    ckt_gemm_geom g = geometry_args(L, t, 3);
    char text[600];
    ckt_error err;
    ckt_layout tv;
    if (ckt_gemm_tv(t, &g, o, text, sizeof text, &err) || ckt_layout_parse(text, &tv, &err))
        return ckt_l_error(L, &err);
    ckt_l_pushlayout(L, &tv);
    return 1;
}

/* ---------------------------------------------------------------- builder pieces */

/* The rows and columns of a tile given as an LDS tensor of kernel k or as a static layout. */
static void tile_shape(lua_State *L, int idx, ckt_kernel *k, const char *what, int64_t *rows,
                       int64_t *cols)
{
    ckt_layout lay;
    if (lua_isuserdata(L, idx) && !ckt_l_testlayout(L, idx)) {
        int ti = kernel_tensor(L, idx, &k, what);
        const ckt_ktensor *t = ckt_kernel_tensor(k, ti);
        if (t->mem != CKT_MEM_LDS)
            ckt_l_argerror(L, idx, "%s: LDS tensor or tile layout expected, got a %s tensor", what,
                           ckt_memory_name(t->mem));
        lay = t->layout;
    } else {
        ckt_l_tolayout(L, idx, what, &lay);
    }
    if (ckt_layout_rank(&lay) != 2)
        ckt_l_argerror(L, idx, "%s: a GEMM tile has 2 modes, this layout has %d", what,
                       ckt_layout_rank(&lay));
    ckt_layout m;
    ckt_error err;
    if (ckt_layout_mode(&lay, 0, &m, &err)) ckt_l_error(L, &err);
    *rows = ckt_layout_size(&m);
    if (ckt_layout_mode(&lay, 1, &m, &err)) ckt_l_error(L, &err);
    *cols = ckt_layout_size(&m);
}

/* b:make_blockwise_gemm_xdl_c_vgpr(a_tile, b_tile, traits): a_tile MPerBlock x KPerBlock, b_tile
 * NPerBlock x KPerBlock (LDS tensors or layouts); f32 registers in the instruction's C layout. */
static int b_c_vgpr(lua_State *L)
{
    static const char *const fn = "make_blockwise_gemm_xdl_c_vgpr";
    ckt_kernel *k = builder(L, 1, fn);
    int64_t mpb, kpa, npb, kpb;
    tile_shape(L, 2, k, "a_tile", &mpb, &kpa);
    tile_shape(L, 3, k, "b_tile", &npb, &kpb);
    if (kpa != kpb)
        return ckt_l_argerror(L, 3, "b_tile has K = %lld but a_tile has K = %lld (b_tile is N x K)",
                              (long long)kpb, (long long)kpa);
    const ckt_gemm_traits *t = checktraits(L, 4, NULL);
    ckt_gemm_geom g;
    ckt_error err;
    int reg;
    if (ckt_gemm_geometry(t, mpb, npb, kpa, ckt_kernel_block(k), &g, &err) ||
        ckt_kernel_gemm_c_vgpr(k, t, mpb, npb, &reg, NULL, &err))
        return ckt_l_errorf(L, "%s: %s", fn, err.msg);
    push_object(L, 1, CKT_L_KTENSOR, reg);
    return 1;
}

/* ckt.make_blockwise_gemm_xdl_c_local_partition(c_tile, traits): the C block tile (a tile window,
 * e.g. ckt.local_tile of the C tensor) split the way the C registers hold it; p:store(c_vgpr)
 * converts to the tensor's dtype (masked at padded edges). */
static int l_c_partition(lua_State *L)
{
    static const char *const fn = "make_blockwise_gemm_xdl_c_local_partition";
    int first = luaL_testudata(L, 1, CKT_L_KERNEL) ? 2 : 1; /* also a builder method */
    ckt_kernel *k = first == 2 ? builder(L, 1, fn) : NULL;
    int wi = kernel_window(L, first, &k, "c_tile");
    const ckt_kwindow *w = ckt_kernel_window(k, wi);
    if (w->rank != 2)
        return ckt_l_argerror(L, first, "c_tile has rank %d, the C tile has 2", w->rank);
    const ckt_gemm_traits *t = checktraits(L, first + 1, NULL);
    int dist, pw;
    ckt_error err;
    if (ckt_kernel_gemm_c_dist(k, t, w->lengths[0], w->lengths[1], &dist, &err))
        return ckt_l_errorf(L, "%s: %s", fn, err.msg);
    ckt_expr_id origin[2] = {w->origin[0], w->origin[1]};
    int64_t lengths[2] = {w->lengths[0], w->lengths[1]};
    if (ckt_kernel_window_make(k, w->tensor, 2, lengths, origin, &pw, &err))
        return ckt_l_error(L, &err);
    l_kobj *p = push_object(L, first, CKT_L_WINDOW, pw);
    p->dist = dist;
    p->part = 1;
    return 1;
}

/* opts.zero of b:blockwise_gemm: nil or false (none), true (always) or a kernel expression (the
 * condition, e.g. ckt.eq(k, 0): the first K slice of a loop) */
static ckt_expr_id zero_field(lua_State *L, int opts)
{
    ckt_expr_id e = CKT_EXPR_NONE;
    l_kernel *kb = ckt_lk_checkkernel(L, 1);
    lua_getfield(L, opts, "zero");
    if (lua_isboolean(L, -1)) {
        if (lua_toboolean(L, -1)) e = ckt_expr_int(ckt_kernel_exprs(kb->k), 1);
    } else if (!lua_isnil(L, -1)) {
        if (!ckt_lk_testexpr(L, -1))
            luaL_error(L, "blockwise_gemm: zero must be a boolean or a kernel expression, got %s",
                       ckt_l_typename(L, -1));
        e = ckt_lk_toexpr(L, lua_gettop(L), kb, "blockwise_gemm: zero");
    }
    lua_pop(L, 1);
    return e;
}

/* b:blockwise_gemm(a_lds, b_lds, c_vgpr, traits): c_vgpr += a_lds x b_lds^T (blockwise_gemm_xdl) */
static int b_blockwise_gemm(lua_State *L)
{
    ckt_kernel *k = builder(L, 1, "blockwise_gemm");
    int a = kernel_tensor(L, 2, &k, "a_lds");
    int b = kernel_tensor(L, 3, &k, "b_lds");
    int c = kernel_tensor(L, 4, &k, "c_vgpr");
    const ckt_gemm_traits *t = checktraits(L, 5, NULL);
    ckt_error err;
    if (!lua_isnoneornil(L, 6)) {
        /* {pending = n}: wgmma groups left in flight (ckt/wgmma.h); {zero = true or a kernel
         * expression}: c = a x b^T (where the expression is nonzero), c's old values ignored
         * (wgmma's scale-d; a clear first on the other instructions) */
        static const char *const allowed[] = {"pending", "zero", NULL};
        luaL_checktype(L, 6, LUA_TTABLE);
        ckt_l_check_fields(L, 6, "blockwise_gemm", allowed);
        int64_t pending = 0;
        bool async = ckt_l_field_int(L, 6, "blockwise_gemm", "pending", &pending);
        ckt_expr_id zero = zero_field(L, 6);
        if (async) {
            if (ckt_kernel_blockwise_wgmma_async(k, a, b, c, t, pending, zero, &err))
                return ckt_l_error(L, &err);
        } else if (zero !=
                   CKT_EXPR_NONE) { /* (wgmma's scale-d 0, or a clear: the engine chooses) */
            if (ckt_kernel_blockwise_gemm_zero_if(k, a, b, c, t, zero, &err))
                return ckt_l_error(L, &err);
        } else if (ckt_kernel_blockwise_gemm(k, a, b, c, t, &err))
            return ckt_l_error(L, &err);
        return 0;
    }
    if (ckt_kernel_blockwise_gemm(k, a, b, c, t, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* b:wgmma_wait(c_vgpr, pending): wgmma.wait_group pending (the accumulators settled when 0) */
static int b_wgmma_wait(lua_State *L)
{
    ckt_kernel *k = builder(L, 1, "wgmma_wait");
    int c = kernel_tensor(L, 2, &k, "wgmma_wait: argument 1 (c_vgpr)");
    int64_t pending = ckt_l_checkint(L, 3, "wgmma_wait: argument 2 (pending)");
    ckt_error err;
    if (ckt_kernel_wgmma_wait(k, c, pending, &err)) return ckt_l_error(L, &err);
    return 0;
}

void ckt_lk_open_gemm(lua_State *L)
{
    static const ckt_l_entry rows[] = {
        {CKT_L_MMA, "__index", m_index},
        {CKT_L_MMA, "__tostring", m_tostring},
        {CKT_L_MMA, "layout", m_layout},
        {CKT_L_MMA, "grid", m_draw},
        {CKT_L_MMA, "svg", m_draw},
        {CKT_L_MMA, "on", m_has},
        {CKT_L_TRAITS, "__index", t_index},
        {CKT_L_TRAITS, "__tostring", t_tostring},
        {CKT_L_TRAITS, "geometry", t_geometry},
        {CKT_L_TRAITS, "tv", t_tv},
        {CKT_L_KERNEL, "blockwise_gemm", b_blockwise_gemm},
        {CKT_L_KERNEL, "blockwise_gemm_xdl", b_blockwise_gemm},
        {CKT_L_KERNEL, "wgmma_wait", b_wgmma_wait},
        {CKT_L_KERNEL, "make_blockwise_gemm_xdl_c_vgpr", b_c_vgpr},
        {CKT_L_KERNEL, "make_blockwise_gemm_xdl_c_local_partition", l_c_partition},
        {CKT_L_MODULE, "mma", l_mma},
        {CKT_L_MODULE, "mma_list", l_mma_list},
        {CKT_L_MODULE, "mma_find", l_mma_find},
        {CKT_L_MODULE, "gemm_traits", l_gemm_traits},
        {CKT_L_MODULE, "make_blockwise_gemm_xdl_c_local_partition", l_c_partition},
        {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(L, "mma",
                   "ckt.mma(name): a matrix instruction as data: name, isa, vendor, targets, m, n, "
                   "k (shape), a, b, c (dtypes),\n"
                   "lanes, a_values, b_values, c_values, k_chunk, intrinsic, doc; M:layout(op) "
                   "(the lane layout of \"A\", \"B\" or \"C\":\n"
                   "(lane, value) -> offset in the row-major operand tile: A M x K, B K x N, C M x "
                   "N), M:grid(op), M:svg(op), M:on(target).\n"
                   "ckt.mma_list([target]) lists the names; ckt.mma_find{target=, a=, b=, c=, m=, "
                   "n=, k=} picks one.");
    ckt_l_help_add(L, "gemm_traits",
                   "ckt.gemm_traits{instr=, m_per_wave=, n_per_wave=, k_pack=} or "
                   "ckt.gemm_traits(\"32x32Xdl_4x2XdlPerWave_8K1\", dtype):\n"
                   "CK's BlockwisGemmXdlTraits: the instruction, instructions per wave along M and "
                   "N, and K1 (contiguous K per lane).\n"
                   "T:geometry(MPerBlock, NPerBlock, KPerBlock, threads) -> {waves_m=, waves_n=, "
                   "k_step=, pack=}; T:tv(op, M, N, K, threads).");
    ckt_l_help_add(
        L, "blockwise_gemm",
        "b:blockwise_gemm(a_lds, b_lds, c_vgpr, traits): c_vgpr += A B over one LDS block tile "
        "(the CK wrapper's\n"
        "blockwise_gemm_xdl): a_lds MPerBlock x KPerBlock, b_lds NPerBlock x KPerBlock (any static "
        "layout, swizzled too).\n"
        "c_vgpr = b:make_blockwise_gemm_xdl_c_vgpr(a_tile, b_tile, traits) (f32; clear it with "
        "b:clear);\n"
        "ckt.make_blockwise_gemm_xdl_c_local_partition(c_tile, traits) is the C tile split the "
        "same way: p:store(c_vgpr).\n"
        "HIP: MFMA builtins; CUDA: mma.sync; cpu:<gpu>: the instruction emulated lane by lane.");
    ckt_l_help_add(L, "mma_list",
                   "ckt.mma_list([target]) -> the names of the matrix instructions (every one, or "
                   "those the target has); ckt.mma(name) describes one.");
    ckt_l_help_add(
        L, "mma_find",
        "ckt.mma_find{target=, a=, b=, c=, m=, n=, k=} -> the matrix instruction of the target "
        "with those operand dtypes (and shape, where given); an error names what has none.");
    ckt_l_help_add(L, "make_blockwise_gemm_xdl_c_local_partition",
                   "ckt.make_blockwise_gemm_xdl_c_local_partition(c_tile, traits): the C block "
                   "tile (a window, e.g. ckt.local_tile of C) split the way blockwise_gemm's C "
                   "registers hold it; p:store(c_vgpr) converts to the tensor's dtype (masked at "
                   "padded edges), p:load() reads it in that distribution.");
}
