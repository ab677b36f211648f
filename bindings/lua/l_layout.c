/* Lua userdata for layouts, swizzles and composed layouts, and the layout algebra. */
#include <stdlib.h>
#include <string.h>

#include "ckt/visual.h"
#include "l_internal.h"

/* ---- tuples <-> Lua values ---- */

/* arg: the call's argument the tuple is (0: a value the binding pushed; see l_internal.h). */
static void totuple_rec(lua_State *L, int idx, int arg, const char *what, ckt_tuple *t, int depth)
{
    idx = lua_absindex(L, idx);
    if (depth > CKT_MAX_DEPTH)
        ckt_l_argerror(L, arg, "%s: nesting deeper than %d", what, CKT_MAX_DEPTH);
    if (t->n >= CKT_TUPLE_NODES)
        ckt_l_argerror(L, arg, "%s: more than %d entries", what, CKT_TUPLE_NODES);
    int node = t->n++;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        t->arity[node] = CKT_LEAF;
        t->value[node] = ckt_l_checkint_arg(L, idx, arg, what);
        return;
    }
    if (!lua_istable(L, idx) || luaL_getmetafield(L, idx, "__name") != LUA_TNIL) {
        if (lua_istable(L, idx)) lua_pop(L, 1);
        ckt_l_argerror(L, arg, "%s must be an integer or a (nested) table of integers, got %s",
                       what, luaL_typename(L, idx));
    }
    lua_Integer n = luaL_len(L, idx);
    if (n <= 0) ckt_l_argerror(L, arg, "%s: an empty table is not a tuple", what);
    if (n > CKT_MAX_RANK)
        ckt_l_argerror(L, arg, "%s: %lld modes are beyond the capacity %d", what, (long long)n,
                       CKT_MAX_RANK);
    t->arity[node] = (int8_t)n;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        totuple_rec(L, -1, arg, what, t, depth + 1);
        lua_pop(L, 1);
    }
}

void ckt_l_totuple(lua_State *L, int idx, const char *what, ckt_tuple *out)
{
    ckt_tuple t;
    memset(&t, 0, sizeof t);
    luaL_checkstack(L, 2 * CKT_MAX_DEPTH + 8, "tuple");
    totuple_rec(L, idx, idx > 0 ? idx : 0, what, &t, 0);
    *out = t;
}

static int pushtuple_node(lua_State *L, const ckt_tuple *t, int i)
{
    if (t->arity[i] == CKT_LEAF) {
        lua_pushinteger(L, (lua_Integer)t->value[i]);
        return i + 1;
    }
    lua_createtable(L, t->arity[i], 0);
    int k = i + 1;
    for (int c = 0; c < t->arity[i]; c++) {
        k = pushtuple_node(L, t, k);
        lua_rawseti(L, -2, c + 1);
    }
    return k;
}

void ckt_l_pushtuple(lua_State *L, const ckt_tuple *t)
{
    luaL_checkstack(L, CKT_MAX_DEPTH + 4, "tuple");
    pushtuple_node(L, t, 0);
}

/* ---- layout userdata ---- */

void ckt_l_pushlayout(lua_State *L, const ckt_layout *l)
{
    ckt_l_push_value(L, CKT_L_LAYOUT, l, sizeof *l);
}

ckt_layout *ckt_l_testlayout(lua_State *L, int idx) { return luaL_testudata(L, idx, CKT_L_LAYOUT); }

ckt_layout *ckt_l_checklayout(lua_State *L, int idx, const char *what)
{
    ckt_layout *l = ckt_l_testlayout(L, idx);
    if (!l)
        ckt_l_argerror(L, idx > 0 ? idx : 0, "%s must be a layout, got %s",
                       what ? what : "the value", luaL_typename(L, idx));
    return l;
}

void ckt_l_tolayout(lua_State *L, int idx, const char *what, ckt_layout *out)
{
    ckt_error err;
    int arg = idx > 0 ? idx : 0;
    ckt_layout *l = ckt_l_testlayout(L, idx);
    if (l) {
        *out = *l;
        return;
    }
    if (lua_type(L, idx) == LUA_TNUMBER) {
        int64_t n = ckt_l_checkint(L, idx, what ? what : "size"), one = 1;
        if (n <= 0)
            ckt_l_argerror(L, arg, "%s%ssize %lld must be positive", what ? what : "",
                           what ? ": " : "", (long long)n);
        if (ckt_layout_flat(out, 1, &n, &one, &err)) ckt_l_error(L, &err);
        return;
    }
    if (lua_type(L, idx) == LUA_TSTRING) {
        if (ckt_layout_parse(lua_tostring(L, idx), out, &err))
            ckt_l_argerror(L, arg, "%s%s%s", what ? what : "", what ? ": " : "", err.msg);
        return;
    }
    if (!what)
        ckt_l_argerror(L, arg, "layout, integer or layout string expected, got %s",
                       luaL_typename(L, idx));
    ckt_l_argerror(L, arg, "%s must be a layout, an integer or a layout string, got %s", what,
                   luaL_typename(L, idx));
}

static ckt_layout *self(lua_State *L) { return ckt_l_checklayout(L, 1, "self"); }

static int raise_prefixed(lua_State *L, const char *fn, ckt_error *err)
{
    size_t n = strlen(fn);
    if (strncmp(err->msg, fn, n) == 0 && err->msg[n] == ':') return ckt_l_error(L, err);
    return ckt_l_errorf(L, "%s: %s", fn, err->msg);
}

/* An algebra function's end: the layout out (1 result), or st's error raised prefixed by fn. */
static int push_result(lua_State *L, const char *fn, ckt_status st, ckt_error *err,
                       const ckt_layout *out)
{
    if (st) return raise_prefixed(L, fn, err);
    ckt_l_pushlayout(L, out);
    return 1;
}

/* ckt.layout(shape [, stride | "row" | "col"]) or ckt.layout("(4,2):(2,1)") */
static int l_layout(lua_State *L)
{
    ckt_error err;
    ckt_layout out;
    if (lua_type(L, 1) == LUA_TSTRING && lua_isnoneornil(L, 2)) {
        return push_result(L, "layout", ckt_layout_parse(lua_tostring(L, 1), &out, &err), &err,
                           &out);
    }
    if (ckt_l_testlayout(L, 1)) {
        ckt_l_pushlayout(L, ckt_l_testlayout(L, 1));
        return 1;
    }
    ckt_tuple shape, stride;
    ckt_l_totuple(L, 1, "shape", &shape);
    ckt_status st;
    if (lua_isnoneornil(L, 2) ||
        (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "col") == 0)) {
        st = ckt_layout_col_major(&out, &shape, &err);
    } else if (lua_type(L, 2) == LUA_TSTRING) {
        if (strcmp(lua_tostring(L, 2), "row") != 0)
            return ckt_l_errorf(L, "layout: stride must be a tuple, \"row\" or \"col\", got \"%s\"",
                                lua_tostring(L, 2));
        st = ckt_layout_row_major(&out, &shape, &err);
    } else {
        ckt_l_totuple(L, 2, "stride", &stride);
        st = ckt_layout_make(&out, &shape, &stride, &err);
    }
    return push_result(L, "layout", st, &err, &out);
}

static int m_tostring(lua_State *L)
{
    char buf[2048];
    int n = ckt_layout_to_string(self(L), buf, sizeof buf);
    if (n >= (int)sizeof buf) {
        char *big = malloc((size_t)n + 1);
        if (!big) return luaL_error(L, "out of memory");
        ckt_layout_to_string(self(L), big, (size_t)n + 1);
        lua_pushstring(L, big);
        free(big);
        return 1;
    }
    lua_pushstring(L, buf);
    return 1;
}

static int m_eq(lua_State *L)
{
    ckt_layout *a = ckt_l_testlayout(L, 1), *b = ckt_l_testlayout(L, 2);
    lua_pushboolean(L, a && b && ckt_layout_equal(a, b));
    return 1;
}

/* L(i), L(i, j, ...), L({i,{j,k}}) */
static int m_call(lua_State *L)
{
    ckt_layout *l = self(L);
    int nargs = lua_gettop(L) - 1;
    ckt_error err;
    int64_t off;
    if (nargs == 0) return ckt_l_errorf(L, "layout call: expected an index or a coordinate");
    if (nargs == 1 && lua_type(L, 2) == LUA_TNUMBER) {
        int64_t i = ckt_l_checkint(L, 2, "index");
        if (ckt_layout_eval(l, i, &off, &err)) return ckt_l_error(L, &err);
    } else {
        ckt_tuple c;
        if (nargs == 1) {
            ckt_l_totuple(L, 2, "coordinate", &c);
        } else {
            lua_createtable(L, nargs, 0);
            for (int i = 0; i < nargs; i++) {
                lua_pushvalue(L, 2 + i);
                lua_rawseti(L, -2, i + 1);
            }
            ckt_l_totuple(L, -1, "layout call: coordinate", &c);
        }
        if (ckt_layout_eval_coord(l, &c, &off, &err)) return ckt_l_error(L, &err);
    }
    lua_pushinteger(L, (lua_Integer)off);
    return 1;
}

static int m_shape(lua_State *L)
{
    ckt_l_pushtuple(L, &self(L)->shape);
    return 1;
}
static int m_stride(lua_State *L)
{
    ckt_l_pushtuple(L, &self(L)->stride);
    return 1;
}
static int m_size(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_layout_size(self(L)));
    return 1;
}
static int m_cosize(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_layout_cosize(self(L)));
    return 1;
}
static int m_rank(lua_State *L)
{
    lua_pushinteger(L, ckt_layout_rank(self(L)));
    return 1;
}
static int m_depth(lua_State *L)
{
    lua_pushinteger(L, ckt_layout_depth(self(L)));
    return 1;
}

static int m_mode(lua_State *L)
{
    ckt_layout *l = self(L), m;
    ckt_error err;
    int64_t i = ckt_l_checkint(L, 2, "index");
    if (i < 0 || i >= ckt_layout_rank(l))
        return ckt_l_errorf(L, "mode: index %lld is out of range for rank %d", (long long)i,
                            ckt_layout_rank(l));
    if (ckt_layout_mode(l, (int)i, &m, &err)) return ckt_l_error(L, &err);
    ckt_l_pushlayout(L, &m);
    return 1;
}

/* ---- drawing: rows x cols cells of a rank-1/rank-2 layout-like function ---- */

typedef int (*eval2_fn)(lua_State *L, int idx, int64_t i, int64_t j, int64_t *v);

static int eval2_layout(lua_State *L, int idx, int64_t i, int64_t j, int64_t *v)
{
    ckt_layout *l = ckt_l_testlayout(L, idx);
    ckt_error err;
    if (ckt_layout_rank(l) == 1) return ckt_layout_eval(l, j, v, &err) == CKT_OK;
    ckt_tuple c;
    int64_t ij[2] = {i, j};
    ckt_tuple_flat(&c, 2, ij, &err);
    return ckt_layout_eval_coord(l, &c, v, &err) == CKT_OK;
}

static void grid_dims(lua_State *L, const ckt_layout *l, int64_t *rows, int64_t *cols)
{
    int r = ckt_layout_rank(l);
    if (r > 2)
        ckt_l_errorf(
            L,
            "grid: a rank-%d layout cannot be drawn; draw a rank-1 or rank-2 layout (e.g. a mode)",
            r);
    if (r == 1) {
        *rows = 1;
        *cols = ckt_layout_size(l);
        return;
    }
    ckt_layout m0, m1;
    ckt_error err;
    ckt_layout_mode(l, 0, &m0, &err);
    ckt_layout_mode(l, 1, &m1, &err);
    *rows = ckt_layout_size(&m0);
    *cols = ckt_layout_size(&m1);
}

/* Fill values (and optional labels: a function labels(i, j, value) or a row-major sequence
 * of rows*cols strings) and render. */
/* The options table of an svg method (argument 2), checked: 2, or 0 for none or a grid. */
static int svg_opts(lua_State *L, int svg)
{
    if (!svg || lua_isnoneornil(L, 2)) return 0;
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const allowed[] = {"labels", "title", "cell", NULL};
    ckt_l_check_fields(L, 2, "svg", allowed);
    return 2;
}

/* The picture of obj (grid text, or svg with the options at opts: title= replaces title). */
static int draw(lua_State *L, int obj, eval2_fn f, int64_t rows, int64_t cols, const char *title,
                int svg, int opts)
{
    if (opts) ckt_l_field_string(L, opts, "svg", "title", &title);
    const char *fn = svg ? "svg" : "grid";
    if (rows > CKT_RENDER_MAX_CELLS / cols)
        return ckt_l_errorf(L, "%s: %lld x %lld cells are too many to draw (at most %d)", fn,
                            (long long)rows, (long long)cols, CKT_RENDER_MAX_CELLS);
    int64_t n = rows * cols;
    int cell = 0;
    if (opts) {
        int64_t c;
        if (ckt_l_field_int(L, opts, "svg", "cell", &c)) {
            if (c < 4 || c > 200)
                return ckt_l_errorf(L, "svg: cell %lld must be between 4 and 200 pixels",
                                    (long long)c);
            cell = (int)c;
        }
    }
    int64_t *vals = lua_newuserdatauv(L, sizeof(int64_t) * (size_t)n, 0); /* GC-owned scratch */
    int lab_type = opts ? lua_getfield(L, opts, "labels") : LUA_TNIL;
    if (lab_type != LUA_TNIL && lab_type != LUA_TFUNCTION && lab_type != LUA_TTABLE)
        return ckt_l_errorf(
            L, "svg: labels must be a function(row, col, value) or a sequence of strings, got %s",
            lua_typename(L, lab_type));
    if (lab_type == LUA_TTABLE && luaL_len(L, -1) != n)
        return ckt_l_errorf(
            L, "svg: labels has %lld entries but the picture has %lld x %lld = %lld cells",
            (long long)luaL_len(L, -1), (long long)rows, (long long)cols, (long long)n);
    int has_labels = lab_type != LUA_TNIL;
    int lab_idx = lua_gettop(L);
    const char **labels = NULL;
    int anchor = 0;
    if (has_labels) {
        labels = lua_newuserdatauv(L, sizeof(char *) * (size_t)n, 0);
        lua_createtable(L, (int)(n < 1 << 20 ? n : 1 << 20), 0); /* keeps the label strings alive */
        anchor = lua_gettop(L);
    }
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t v = 0;
            if (!f(L, obj, i, j, &v))
                return ckt_l_errorf(L, "grid: cannot evaluate cell (%lld, %lld)", (long long)i,
                                    (long long)j);
            vals[i * cols + j] = v;
            if (has_labels) {
                if (lab_type == LUA_TFUNCTION) {
                    lua_pushvalue(L, lab_idx);
                    lua_pushinteger(L, (lua_Integer)i);
                    lua_pushinteger(L, (lua_Integer)j);
                    lua_pushinteger(L, (lua_Integer)v);
                    lua_call(L, 3, 1);
                    if (!lua_isstring(L, -1))
                        return ckt_l_errorf(
                            L, "svg: labels(%lld, %lld, %lld) must return a string, got %s",
                            (long long)i, (long long)j, (long long)v, luaL_typename(L, -1));
                } else if (lua_geti(L, lab_idx, (lua_Integer)(i * cols + j + 1)) != LUA_TSTRING &&
                           !lua_isnumber(L, -1)) {
                    return ckt_l_errorf(L, "svg: labels[%lld] must be a string, got %s",
                                        (long long)(i * cols + j + 1), luaL_typename(L, -1));
                }
                lua_tostring(L, -1); /* numbers become strings in place */
                labels[i * cols + j] = lua_tostring(L, -1);
                lua_rawseti(L, anchor, (lua_Integer)(i * cols + j + 1));
            }
        }
    ckt_cells c = {rows, cols, vals, labels, title};
    ckt_error err;
    char *s = svg ? ckt_render_svg_sized(&c, cell, &err) : ckt_render_grid(&c, &err);
    if (!s) return ckt_l_error(L, &err);
    lua_pushstring(L, s);
    free(s);
    return 1;
}

/* L:grid() and L:svg{labels=, title=, cell=} */
static int layout_draw(lua_State *L)
{
    int svg = ckt_l_svg(L);
    ckt_layout *l = self(L);
    int opts = svg_opts(L, svg);
    int64_t rows, cols;
    grid_dims(L, l, &rows, &cols);
    char title[512];
    ckt_layout_to_string(l, title, sizeof title);
    return draw(L, 1, eval2_layout, rows, cols, title, svg, opts);
}

/* ---- the algebra ---- */

/* A tiler argument: a layout/integer/string (one layout for the whole of A, n = 0)
 * or a table whose entries are layouts/integers per mode (n = #table). */
static int totiler(lua_State *L, int idx, const char *fn, ckt_layout *tiler)
{
    char what[96];
    if (lua_istable(L, idx) && !ckt_l_testlayout(L, idx)) {
        lua_Integer n = luaL_len(L, idx);
        if (n <= 0 || n > CKT_MAX_RANK)
            return ckt_l_errorf(L, "%s: a tiler table needs 1 to %d modes, got %lld", fn,
                                CKT_MAX_RANK, (long long)n);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_geti(L, idx, i);
            snprintf(what, sizeof what, "%s: tiler mode %lld", fn, (long long)(i - 1));
            if (lua_istable(L, -1) && !ckt_l_testlayout(L, -1)) {
                ckt_tuple t;
                ckt_error err;
                ckt_l_totuple(L, -1, what, &t);
                if (ckt_layout_col_major(&tiler[i - 1], &t, &err))
                    ckt_l_errorf(L, "%s: %s", what, err.msg);
            } else {
                ckt_l_tolayout(L, -1, what, &tiler[i - 1]);
            }
            lua_pop(L, 1);
        }
        return (int)n;
    }
    ckt_l_tolayout(L, idx, NULL, &tiler[0]);
    return 0;
}

static int l_composition(lua_State *L)
{
    ckt_layout a, t[CKT_MAX_RANK], out;
    ckt_error err;
    ckt_l_tolayout(L, 1, NULL, &a);
    int n = totiler(L, 2, "composition", t);
    ckt_status st = n == 0 ? ckt_composition(&a, &t[0], &out, &err)
                           : ckt_composition_tiler(&a, n, t, &out, &err);
    return push_result(L, "composition", st, &err, &out);
}

/* The algebra's operations of one layout and nothing else or a second layout or tiler (ckt.<name>,
 * a layout back), one closure each over its row: unary, tiler (CuTe's tilers as the divides and
 * products take them: one layout, or a table of per-mode layouts) or binary; CuTe defines
 * blocked/raked products for one layout B only (rank-sensitive products). */
typedef struct {
    const char *name;
    ckt_status (*unary)(const ckt_layout *, ckt_layout *, ckt_error *);
    ckt_status (*tiler)(const ckt_layout *, int, const ckt_layout *, ckt_layout *, ckt_error *);
    ckt_status (*binary)(const ckt_layout *, const ckt_layout *, ckt_layout *, ckt_error *);
    bool rank_sensitive;
} algebra_op;

static const algebra_op algebra_ops[] = {
    {"coalesce", .unary = ckt_coalesce},
    {"filter", .unary = ckt_filter},
    {"right_inverse", .unary = ckt_right_inverse},
    {"left_inverse", .unary = ckt_left_inverse},
    {"nullspace", .unary = ckt_nullspace},
    {"logical_divide", .tiler = ckt_logical_divide},
    {"zipped_divide", .tiler = ckt_zipped_divide},
    {"tiled_divide", .tiler = ckt_tiled_divide},
    {"flat_divide", .tiler = ckt_flat_divide},
    {"logical_product", .tiler = ckt_logical_product_tiler},
    {"zipped_product", .tiler = ckt_zipped_product_tiler},
    {"tiled_product", .tiler = ckt_tiled_product_tiler},
    {"flat_product", .tiler = ckt_flat_product},
    {"blocked_product", .binary = ckt_blocked_product, .rank_sensitive = true},
    {"raked_product", .binary = ckt_raked_product, .rank_sensitive = true},
    {"max_common_layout", .binary = ckt_max_common_layout},
};

static int l_algebra(lua_State *L)
{
    const algebra_op *op = ckt_l_row(L);
    if (op->rank_sensitive && lua_istable(L, 2) && !ckt_l_testlayout(L, 2))
        return ckt_l_argerror(L, 2,
                              "one layout expected (CuTe's %s is rank-sensitive and takes no tuple "
                              "of per-mode tilers; "
                              "logical/zipped/tiled/flat_product do)",
                              op->name);
    ckt_layout a, b[CKT_MAX_RANK], out;
    ckt_error err;
    ckt_status st;
    ckt_l_tolayout(L, 1, NULL, &a);
    if (op->unary) {
        st = op->unary(&a, &out, &err);
    } else if (op->tiler) {
        int n = totiler(L, 2, op->name, b);
        st = op->tiler(&a, n, b, &out, &err);
    } else {
        ckt_l_tolayout(L, 2, NULL, &b[0]);
        st = op->binary(&a, &b[0], &out, &err);
    }
    return push_result(L, op->name, st, &err, &out);
}

static int l_complement(lua_State *L)
{
    ckt_layout a, out;
    ckt_error err;
    ckt_l_tolayout(L, 1, NULL, &a);
    int64_t cot = ckt_l_optint(L, 2, "cotarget", 0);
    if (!lua_isnoneornil(L, 2) && cot <= 0)
        return ckt_l_errorf(L, "complement: cotarget %lld must be positive", (long long)cot);
    return push_result(L, "complement", ckt_complement(&a, cot, &out, &err), &err, &out);
}

static int l_make_ordered_layout(lua_State *L)
{
    ckt_tuple shape, order;
    ckt_layout out;
    ckt_error err;
    ckt_l_totuple(L, 1, "shape", &shape);
    ckt_l_totuple(L, 2, "order", &order);
    return push_result(L, "make_ordered_layout",
                       ckt_make_ordered_layout(&shape, &order, &out, &err), &err, &out);
}

static int l_tile_to_shape(lua_State *L)
{
    ckt_layout block, out;
    ckt_tuple shape, order;
    ckt_error err;
    ckt_l_tolayout(L, 1, "block", &block);
    ckt_l_totuple(L, 2, "shape", &shape);
    if (!lua_isnoneornil(L, 3)) ckt_l_totuple(L, 3, "order", &order);
    return push_result(
        L, "tile_to_shape",
        ckt_tile_to_shape(&block, &shape, lua_isnoneornil(L, 3) ? NULL : &order, &out, &err), &err,
        &out);
}

static int l_max_common_vector(lua_State *L)
{
    ckt_layout a, b;
    ckt_error err;
    int64_t v;
    ckt_l_tolayout(L, 1, NULL, &a);
    ckt_l_tolayout(L, 2, NULL, &b);
    if (ckt_max_common_vector(&a, &b, &v, &err))
        return raise_prefixed(L, "max_common_vector", &err);
    lua_pushinteger(L, (lua_Integer)v);
    return 1;
}

static int l_make_layout_tv(lua_State *L)
{
    ckt_layout thr, val, tv;
    ckt_tuple tiler;
    ckt_error err;
    ckt_l_tolayout(L, 1, "thr", &thr);
    ckt_l_tolayout(L, 2, "val", &val);
    if (ckt_make_layout_tv(&thr, &val, &tiler, &tv, &err))
        return raise_prefixed(L, "make_layout_tv", &err);
    ckt_l_pushtuple(L, &tiler);
    ckt_l_pushlayout(L, &tv);
    return 2;
}

int ckt_l_layout_local_tile(lua_State *L)
{
    ckt_layout a, out;
    ckt_tuple tiler, coord;
    ckt_error err;
    int64_t off;
    ckt_l_tolayout(L, 1, NULL, &a);
    ckt_l_totuple(L, 2, "tiler", &tiler);
    ckt_l_totuple(L, 3, "coord", &coord);
    push_result(L, "local_tile", ckt_local_tile(&a, &tiler, &coord, &out, &off, &err), &err, &out);
    lua_pushinteger(L, (lua_Integer)off);
    return 2;
}

int ckt_l_layout_local_partition(lua_State *L)
{
    ckt_layout a, thr, out;
    ckt_error err;
    int64_t off;
    ckt_l_tolayout(L, 1, NULL, &a);
    ckt_l_tolayout(L, 2, "thr_layout", &thr);
    int64_t idx = ckt_l_checkint(L, 3, "idx");
    push_result(L, "local_partition", ckt_local_partition(&a, &thr, idx, &out, &off, &err), &err,
                &out);
    lua_pushinteger(L, (lua_Integer)off);
    return 2;
}

static int l_pad(lua_State *L)
{
    ckt_layout a, out;
    ckt_tuple tile;
    ckt_error err;
    ckt_l_tolayout(L, 1, NULL, &a);
    ckt_l_totuple(L, 2, "tile_shape", &tile);
    return push_result(L, "pad", ckt_pad(&a, &tile, &out, &err), &err, &out);
}

/* ---- swizzles ---- */

static ckt_swizzle *checkswizzle(lua_State *L, int idx)
{
    return luaL_checkudata(L, idx, CKT_L_SWIZZLE);
}

static int l_swizzle(lua_State *L)
{
    int64_t b = ckt_l_checkint(L, 1, "B"), m = ckt_l_checkint(L, 2, "M"),
            s = ckt_l_checkint(L, 3, "S");
    if (b < -64 || b > 64 || m < -64 || m > 64 || s < -64 || s > 64)
        return ckt_l_errorf(L, "swizzle: B, M, S must be small integers, got %lld, %lld, %lld",
                            (long long)b, (long long)m, (long long)s);
    ckt_swizzle sw;
    ckt_error err;
    if (ckt_swizzle_make((int)b, (int)m, (int)s, &sw, &err)) return ckt_l_error(L, &err);
    ckt_l_push_value(L, CKT_L_SWIZZLE, &sw, sizeof sw);
    return 1;
}

static int sw_call(lua_State *L)
{
    ckt_swizzle *sw = checkswizzle(L, 1);
    int64_t x = ckt_l_checkint(L, 2, "offset");
    if (x < 0)
        return ckt_l_errorf(L, "swizzle call: offset %lld must be non-negative", (long long)x);
    lua_pushinteger(L, (lua_Integer)ckt_swizzle_apply(*sw, x));
    return 1;
}

static int sw_tostring(lua_State *L)
{
    ckt_swizzle *sw = checkswizzle(L, 1);
    lua_pushfstring(L, "Sw<%d,%d,%d>", sw->b, sw->m, sw->s);
    return 1;
}

static int sw_eq(lua_State *L)
{
    ckt_swizzle *a = luaL_testudata(L, 1, CKT_L_SWIZZLE), *b = luaL_testudata(L, 2, CKT_L_SWIZZLE);
    lua_pushboolean(L, a && b && a->b == b->b && a->m == b->m && a->s == b->s);
    return 1;
}

static int sw_get(lua_State *L)
{
    ckt_swizzle *sw = checkswizzle(L, 1);
    lua_pushinteger(L, sw->b);
    lua_pushinteger(L, sw->m);
    lua_pushinteger(L, sw->s);
    return 3;
}

/* ---- composed layouts: sw o offset o L ---- */

static ckt_composed *checkcomposed(lua_State *L, int idx)
{
    return luaL_checkudata(L, idx, CKT_L_COMPOSED);
}

static int l_composed(lua_State *L)
{
    ckt_composed c;
    c.sw = *checkswizzle(L, 1);
    c.offset = ckt_l_checkint(L, 2, "offset");
    if (c.offset < 0)
        return ckt_l_errorf(L, "composed: offset %lld must be non-negative", (long long)c.offset);
    ckt_l_tolayout(L, 3, "layout", &c.inner);
    ckt_l_push_value(L, CKT_L_COMPOSED, &c, sizeof c);
    return 1;
}

static int co_call(lua_State *L)
{
    ckt_composed *c = checkcomposed(L, 1);
    /* evaluate the inner layout with the same argument forms as a layout, then swizzle */
    lua_pushcfunction(L, m_call);
    ckt_l_pushlayout(L, &c->inner);
    int nargs = lua_gettop(L) - 3;
    for (int i = 0; i < nargs; i++) lua_pushvalue(L, 2 + i);
    lua_call(L, nargs + 1, 1);
    int64_t x = lua_tointeger(L, -1), y;
    if (__builtin_add_overflow(x, c->offset, &y))
        return ckt_l_errorf(L, "composed: offset overflows");
    if (y < 0)
        return ckt_l_errorf(
            L, "composed: offset %lld is negative; swizzles act on non-negative offsets",
            (long long)y);
    lua_pushinteger(L, (lua_Integer)ckt_swizzle_apply(c->sw, y));
    return 1;
}

static int co_tostring(lua_State *L)
{
    ckt_composed *c = checkcomposed(L, 1);
    char buf[1024];
    ckt_layout_to_string(&c->inner, buf, sizeof buf);
    lua_pushfstring(L, "Sw<%d,%d,%d> o %I o %s", c->sw.b, c->sw.m, c->sw.s, (lua_Integer)c->offset,
                    buf);
    return 1;
}

static int co_size(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_layout_size(&checkcomposed(L, 1)->inner));
    return 1;
}
static int co_rank(lua_State *L)
{
    lua_pushinteger(L, ckt_layout_rank(&checkcomposed(L, 1)->inner));
    return 1;
}
static int co_layout(lua_State *L)
{
    ckt_l_pushlayout(L, &checkcomposed(L, 1)->inner);
    return 1;
}
static int co_swizzle(lua_State *L)
{
    const ckt_composed *c = checkcomposed(L, 1);
    ckt_l_push_value(L, CKT_L_SWIZZLE, &c->sw, sizeof c->sw);
    return 1;
}
static int co_offset(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)checkcomposed(L, 1)->offset);
    return 1;
}

static int eval2_composed(lua_State *L, int idx, int64_t i, int64_t j, int64_t *v)
{
    ckt_composed *c = checkcomposed(L, idx);
    lua_pushvalue(L, LUA_REGISTRYINDEX); /* placeholder keeps the stack shape simple */
    lua_pop(L, 1);
    ckt_layout *inner = &c->inner;
    int64_t x;
    ckt_error err;
    if (ckt_layout_rank(inner) == 1) {
        if (ckt_layout_eval(inner, j, &x, &err)) return 0;
    } else {
        ckt_tuple crd;
        int64_t ij[2] = {i, j};
        ckt_tuple_flat(&crd, 2, ij, &err);
        if (ckt_layout_eval_coord(inner, &crd, &x, &err)) return 0;
    }
    if (__builtin_add_overflow(x, c->offset, &x) || x < 0) return 0;
    *v = ckt_swizzle_apply(c->sw, x);
    return 1;
}

/* C:grid() and C:svg{labels=, title=, cell=}, titled by tostring(C) */
static int composed_draw(lua_State *L)
{
    int svg = ckt_l_svg(L);
    ckt_composed *c = checkcomposed(L, 1);
    int opts = svg_opts(L, svg);
    int64_t rows, cols;
    grid_dims(L, &c->inner, &rows, &cols);
    lua_pushcfunction(L, co_tostring);
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return draw(L, 1, eval2_composed, rows, cols, lua_tostring(L, -1), svg, opts);
}

void ckt_l_open_layout(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_LAYOUT, "__tostring", m_tostring},
                                       {CKT_L_LAYOUT, "__eq", m_eq},
                                       {CKT_L_LAYOUT, "__call", m_call},
                                       {CKT_L_LAYOUT, "shape", m_shape},
                                       {CKT_L_LAYOUT, "stride", m_stride},
                                       {CKT_L_LAYOUT, "size", m_size},
                                       {CKT_L_LAYOUT, "cosize", m_cosize},
                                       {CKT_L_LAYOUT, "rank", m_rank},
                                       {CKT_L_LAYOUT, "depth", m_depth},
                                       {CKT_L_LAYOUT, "mode", m_mode},
                                       {CKT_L_LAYOUT, "grid", layout_draw},
                                       {CKT_L_LAYOUT, "svg", layout_draw},
                                       {CKT_L_SWIZZLE, "__call", sw_call},
                                       {CKT_L_SWIZZLE, "__tostring", sw_tostring},
                                       {CKT_L_SWIZZLE, "__eq", sw_eq},
                                       {CKT_L_SWIZZLE, "params", sw_get},
                                       {CKT_L_COMPOSED, "__call", co_call},
                                       {CKT_L_COMPOSED, "__tostring", co_tostring},
                                       {CKT_L_COMPOSED, "size", co_size},
                                       {CKT_L_COMPOSED, "rank", co_rank},
                                       {CKT_L_COMPOSED, "layout", co_layout},
                                       {CKT_L_COMPOSED, "swizzle", co_swizzle},
                                       {CKT_L_COMPOSED, "offset", co_offset},
                                       {CKT_L_COMPOSED, "grid", composed_draw},
                                       {CKT_L_COMPOSED, "svg", composed_draw},
                                       {CKT_L_MODULE, "layout", l_layout},
                                       {CKT_L_MODULE, "composition", l_composition},
                                       {CKT_L_MODULE, "complement", l_complement},
                                       {CKT_L_MODULE, "make_ordered_layout", l_make_ordered_layout},
                                       {CKT_L_MODULE, "tile_to_shape", l_tile_to_shape},
                                       {CKT_L_MODULE, "max_common_vector", l_max_common_vector},
                                       {CKT_L_MODULE, "make_layout_tv", l_make_layout_tv},
                                       {CKT_L_MODULE, "pad", l_pad},
                                       {CKT_L_MODULE, "swizzle", l_swizzle},
                                       {CKT_L_MODULE, "composed", l_composed},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    CKT_L_REGISTER_ROWS(L, CKT_L_MODULE, l_algebra, algebra_ops);
}
