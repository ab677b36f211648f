/* Lua: CK Tile encodings (ckt.tile_distribution_encoding, ckt.encoding_pattern_2d),
 * fragments (ckt.fragment) and the common TV view (ckt.same_distribution). */
#include <stdlib.h>
#include <string.h>

#include "ckt/distribution.h"
#include "ckt/visual.h"
#include "l_internal.h"

#define CKT_L_ENCODING "ckt.encoding"
#define CKT_L_FRAGMENT "ckt.fragment"

static ckt_encoding *checkenc(lua_State *L, int i) { return luaL_checkudata(L, i, CKT_L_ENCODING); }

void ckt_l_pushencoding(lua_State *L, const ckt_encoding *e)
{
    ckt_l_push_value(L, CKT_L_ENCODING, e, sizeof *e);
}

/* A list of lists of integers (e.g. hs = {{2,4},{8,8}}): returns the outer count. */
static int int_lists(lua_State *L, int t, const char *fn, const char *field,
                     int64_t rows[][CKT_DIST_MAX_H], int *lens, int cap)
{
    char what[96];
    if (lua_getfield(L, t, field) != LUA_TTABLE)
        return ckt_l_argerror(L, t, "field '%s' must be a list of lists of integers, got %s", field,
                              luaL_typename(L, -1));
    int n = (int)luaL_len(L, -1);
    if (n > cap)
        return ckt_l_argerror(L, t, "field '%s' has %d entries, at most %d", field, n, cap);
    for (int i = 0; i < n; i++) {
        lua_geti(L, -1, i + 1);
        snprintf(what, sizeof what, "%s: %s[%d]", fn, field, i + 1);
        lens[i] = ckt_l_int_list(L, -1, what, rows[i], CKT_DIST_MAX_H);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
}

static int l_encoding(lua_State *L)
{
    static const char *const fn = "tile_distribution_encoding";
    static const char *const allowed[] = {
        "rs", "hs", "ps_to_rhs_major", "ps_to_rhs_minor", "ys_to_rhs_major", "ys_to_rhs_minor",
        NULL};
    ckt_l_check_fields(L, 1, fn, allowed);
    ckt_encoding_desc d;
    memset(&d, 0, sizeof d);
    if (lua_getfield(L, 1, "rs") != LUA_TNIL)
        d.nr = ckt_l_int_list(L, -1, "tile_distribution_encoding: rs", d.rs, CKT_DIST_MAX_H);
    lua_pop(L, 1);
    d.nx = int_lists(L, 1, fn, "hs", d.hs, d.nh, CKT_DIST_MAX_X);
    int64_t pm[CKT_DIST_MAX_P][CKT_DIST_MAX_H], pn[CKT_DIST_MAX_P][CKT_DIST_MAX_H];
    int lm[CKT_DIST_MAX_P], ln[CKT_DIST_MAX_P];
    d.np = int_lists(L, 1, fn, "ps_to_rhs_major", pm, lm, CKT_DIST_MAX_P);
    int np2 = int_lists(L, 1, fn, "ps_to_rhs_minor", pn, ln, CKT_DIST_MAX_P);
    if (np2 != d.np)
        return ckt_l_errorf(L, "%s: ps_to_rhs_major has %d Ps but ps_to_rhs_minor %d", fn, d.np,
                            np2);
    for (int p = 0; p < d.np; p++) {
        if (lm[p] != ln[p])
            return ckt_l_errorf(L, "%s: P%d lists %d majors but %d minors", fn, p, lm[p], ln[p]);
        d.np_comp[p] = lm[p];
        for (int j = 0; j < lm[p]; j++) {
            if (pm[p][j] < -1000 || pm[p][j] > 1000 || pn[p][j] < -1000 ||
                pn[p][j] > 1000) /* the engine names the valid range */
                return ckt_l_errorf(L, "%s: P%d entry %d: major %lld / minor %lld is out of range",
                                    fn, p, j, (long long)pm[p][j], (long long)pn[p][j]);
            d.p_major[p][j] = (int)pm[p][j];
            d.p_minor[p][j] = (int)pn[p][j];
        }
    }
    int64_t ym[CKT_DIST_MAX_Y], yn[CKT_DIST_MAX_Y];
    lua_getfield(L, 1, "ys_to_rhs_major");
    d.ny = lua_isnil(L, -1) ? 0
                            : ckt_l_int_list(L, -1, "tile_distribution_encoding: ys_to_rhs_major",
                                             ym, CKT_DIST_MAX_Y);
    lua_pop(L, 1);
    lua_getfield(L, 1, "ys_to_rhs_minor");
    int ny2 = lua_isnil(L, -1)
                  ? 0
                  : ckt_l_int_list(L, -1, "tile_distribution_encoding: ys_to_rhs_minor", yn,
                                   CKT_DIST_MAX_Y);
    lua_pop(L, 1);
    if (ny2 != d.ny)
        return ckt_l_errorf(L, "%s: ys_to_rhs_major has %d Ys but ys_to_rhs_minor %d", fn, d.ny,
                            ny2);
    for (int y = 0; y < d.ny; y++) {
        if (ym[y] < -1000 || ym[y] > 1000 || yn[y] < -1000 || yn[y] > 1000)
            return ckt_l_errorf(L, "%s: Y%d: major %lld / minor %lld is out of range", fn, y,
                                (long long)ym[y], (long long)yn[y]);
        d.y_major[y] = (int)ym[y];
        d.y_minor[y] = (int)yn[y];
    }
    ckt_encoding e;
    ckt_error err;
    if (ckt_encoding_make(&d, &e, &err)) return ckt_l_error(L, &err);
    ckt_l_pushencoding(L, &e);
    return 1;
}

static int l_pattern_2d(lua_State *L)
{
    static const char *const fn = "encoding_pattern_2d";
    static const char *const allowed[] = {"block_size", "y_per_tile", "x_per_tile",
                                          "vec_size",   "pattern",    "num_wave_groups",
                                          "warp_size",  "shuffled",   NULL};
    ckt_l_check_fields(L, 1, fn, allowed);
    ckt_pattern_2d p = {0, 0, 0, 0, 1, 64, CKT_THREAD_RAKED};
    int shuffled = 0;
    static const char *const req[] = {"block_size", "y_per_tile", "x_per_tile", "vec_size"};
    int64_t *dst[] = {&p.block_size, &p.y_per_tile, &p.x_per_tile, &p.vec_size};
    for (int i = 0; i < 4; i++)
        if (!ckt_l_field_int(L, 1, fn, req[i], dst[i]))
            return ckt_l_argerror(L, 1, "field '%s' is required", req[i]);
    ckt_l_field_int(L, 1, fn, "num_wave_groups", &p.num_wave_groups);
    ckt_l_field_int(L, 1, fn, "warp_size", &p.warp_size);
    ckt_l_field_bool(L, 1, fn, "shuffled", &shuffled);
    const char *pat = "thread_raked";
    ckt_l_field_string(L, 1, fn, "pattern", &pat);
    if (strcmp(pat, "thread_raked") == 0)
        p.pattern = CKT_THREAD_RAKED;
    else if (strcmp(pat, "warp_raked") == 0)
        p.pattern = CKT_WARP_RAKED;
    else if (strcmp(pat, "block_raked") == 0)
        p.pattern = CKT_BLOCK_RAKED;
    else
        return ckt_l_errorf(
            L,
            "%s: pattern must be \"thread_raked\", \"warp_raked\" or \"block_raked\", got \"%s\"",
            fn, pat);
    ckt_encoding e;
    ckt_error err;
    if ((shuffled ? ckt_encoding_pattern_2d_shuffled : ckt_encoding_pattern_2d)(&p, &e, &err))
        return ckt_l_error(L, &err);
    ckt_l_pushencoding(L, &e);
    return 1;
}

static int e_index(lua_State *L)
{
    ckt_encoding *e = checkenc(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING) {
        const char *k = lua_tostring(L, 2);
        if (strcmp(k, "pattern") == 0) {
            lua_pushstring(L, ckt_pattern_name(e->pattern.pattern));
            return 1;
        }
        if (e->pattern.pattern != CKT_PATTERN_NONE) { /* the fields of a pattern's encoding */
            const ckt_l_int_field f[] = {{"x0", e->x0},
                                         {"x1", e->x1},
                                         {"y0", e->y0},
                                         {"y1", e->y1},
                                         {"y2", e->y2},
                                         {"block_size", e->pattern.block_size},
                                         {"y_per_tile", e->pattern.y_per_tile},
                                         {"x_per_tile", e->pattern.x_per_tile},
                                         {"vec_size", e->pattern.vec_size},
                                         {"warp_size", e->pattern.warp_size},
                                         {"num_wave_groups", e->pattern.num_wave_groups}};
            if (ckt_l_push_int_field(L, k, f, sizeof f / sizeof *f)) return 1;
            if (strcmp(k, "shuffled") == 0) {
                lua_pushboolean(L, e->shuffled);
                return 1;
            }
        }
    }
    return ckt_l_index_method(L, CKT_L_ENCODING);
}

static int e_ys_lengths(lua_State *L)
{
    ckt_encoding *e = checkenc(L, 1);
    int64_t ys[CKT_DIST_MAX_Y];
    ckt_encoding_ys_lengths(e, ys, NULL);
    ckt_l_push_int_list(L, ys, e->d.ny);
    return 1;
}

static int e_x_lengths(lua_State *L)
{
    ckt_encoding *e = checkenc(L, 1);
    int64_t xs[CKT_DIST_MAX_X];
    ckt_encoding_x_lengths(e, xs, NULL);
    ckt_l_push_int_list(L, xs, e->d.nx);
    return 1;
}

static int e_num_threads(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_encoding_num_threads(checkenc(L, 1)));
    return 1;
}

static int e_calculate_index(lua_State *L)
{
    ckt_encoding *e = checkenc(L, 1);
    int64_t t = ckt_l_checkint(L, 2, "thread_id");
    int64_t ys[CKT_DIST_MAX_Y], xs[CKT_DIST_MAX_X];
    int n = ckt_l_int_list(L, 3, "y_coords", ys, CKT_DIST_MAX_Y);
    if (n != e->d.ny)
        return ckt_l_errorf(L, "calculate_index: y_coords has %d entries, the encoding has %d Ys",
                            n, e->d.ny);
    ckt_error err;
    if (ckt_encoding_calculate_index(e, t, ys, xs, &err)) return ckt_l_error(L, &err);
    ckt_l_push_int_list(L, xs, e->d.nx);
    return 1;
}

static int e_owner(lua_State *L)
{
    ckt_encoding *e = checkenc(L, 1);
    int64_t want[CKT_DIST_MAX_X], ys[CKT_DIST_MAX_Y], count, first[64];
    int n = ckt_l_int_list(L, 2, "x_coords", want, CKT_DIST_MAX_X);
    if (n != e->d.nx)
        return ckt_l_errorf(L, "owner: x_coords has %d entries, the encoding has %d X dimensions",
                            n, e->d.nx);
    ckt_error err;
    if (ckt_encoding_owner(e, want, first, 64, &count, ys, &err)) return ckt_l_error(L, &err);
    int64_t *t = first;
    if (count > 64) {
        if (count > (1 << 24))
            return ckt_l_errorf(L, "owner: %lld replicated owners are too many to list",
                                (long long)count);
        t = lua_newuserdatauv(L, sizeof(int64_t) * (size_t)count, 0);
        if (ckt_encoding_owner(e, want, t, count, &count, ys, &err)) return ckt_l_error(L, &err);
    }
    ckt_l_push_int_list(L, t, (int)count);
    ckt_l_push_int_list(L, ys, e->d.ny);
    return 2;
}

static int e_num_values(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)ckt_encoding_num_values(checkenc(L, 1)));
    return 1;
}

static int e_tv_layout(lua_State *L)
{
    ckt_layout tv;
    ckt_error err;
    if (ckt_encoding_tv_layout(checkenc(L, 1), &tv, &err)) return ckt_l_error(L, &err);
    ckt_l_pushlayout(L, &tv);
    return 1;
}

int ckt_l_draw_tv(lua_State *L, const ckt_layout *tv, int64_t rows, int64_t cols, const char *title,
                  int svg, int opts)
{
    const char *fn = svg ? "svg" : "grid";
    if (rows <= 0 || cols <= 0 || rows > CKT_RENDER_MAX_CELLS / cols)
        return ckt_l_errorf(L, "%s: a %lld x %lld tile is too many cells to draw (at most %d)", fn,
                            (long long)rows, (long long)cols, CKT_RENDER_MAX_CELLS);
    int cell = 0;
    if (opts) {
        luaL_checktype(L, opts, LUA_TTABLE);
        int64_t c;
        ckt_l_field_string(L, opts, fn, "title", &title);
        if (ckt_l_field_int(L, opts, fn, "cell", &c)) {
            if (c < 4 || c > 200)
                return ckt_l_errorf(L, "%s: cell %lld must be between 4 and 200 pixels", fn,
                                    (long long)c);
            cell = (int)c;
        }
    }
    int64_t cells = rows * cols;
    int64_t *ot = lua_newuserdatauv(L, sizeof(int64_t) * (size_t)cells * 2, 0), *ov = ot + cells;
    ckt_error err;
    if (ckt_tv_owners(tv, cells, ot, ov, &err)) return ckt_l_error(L, &err);
    char **labels = lua_newuserdatauv(L, sizeof(char *) * (size_t)cells, 0);
    char *text = lua_newuserdatauv(L, (size_t)cells * 24, 0);
    for (int64_t i = 0; i < cells; i++) {
        labels[i] = text + i * 24;
        if (ot[i] < 0)
            snprintf(labels[i], 24, ".");
        else
            snprintf(labels[i], 24, "T%lld/V%lld", (long long)ot[i], (long long)ov[i]);
    }
    ckt_cells c = {rows, cols, ot, (const char *const *)labels, title};
    char *s = svg ? ckt_render_svg_sized(&c, cell, &err) : ckt_render_grid(&c, &err);
    if (!s) return ckt_l_error(L, &err);
    lua_pushstring(L, s);
    free(s);
    return 1;
}

/* Options of grid()/svg{}: svg takes {title=, cell=} (plus extra, e.g. subgroup_size for nested
 * layouts). */
int ckt_l_draw_opts(lua_State *L, int idx, int svg, const char *extra)
{
    if (lua_isnoneornil(L, idx)) return 0;
    const char *fn = svg ? "svg" : "grid";
    if (!lua_istable(L, idx))
        return ckt_l_errorf(L, "%s: options must be a table, got %s", fn, luaL_typename(L, idx));
    const char *const with[] = {"title", "cell", extra, NULL};
    const char *const without[] = {extra, NULL};
    ckt_l_check_fields(L, idx, fn, svg ? with : without);
    return lua_absindex(L, idx);
}

static int e_draw(lua_State *L)
{
    int svg = ckt_l_svg(L);
    ckt_encoding *e = checkenc(L, 1);
    int opts = ckt_l_draw_opts(L, 2, svg, NULL);
    if (e->d.nx > 2)
        return ckt_l_errorf(
            L, "%s: only 1-D and 2-D encodings can be drawn (this one has %d X dimensions)",
            svg ? "svg" : "grid", e->d.nx);
    int64_t xl[2] = {1, 1};
    ckt_encoding_x_lengths(e, xl + 2 - e->d.nx, NULL); /* 1-D: one row */
    ckt_layout tv;
    ckt_error err;
    if (ckt_encoding_tv_layout(e, &tv, &err)) return ckt_l_error(L, &err);
    char title[512];
    ckt_encoding_to_string(e, title, sizeof title);
    return ckt_l_draw_tv(L, &tv, xl[0], xl[1], title, svg, opts);
}

CKT_L_TOSTRING(e_tostring, checkenc, ckt_encoding_to_string)

/* ---- fragments ---- */

static int l_fragment(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    const char *op = luaL_checkstring(L, 2);
    if (strlen(op) != 1)
        return ckt_l_errorf(L, "fragment: operand must be \"A\", \"B\" or \"C\", got \"%s\"", op);
    ckt_fragment f;
    ckt_error err;
    if (ckt_fragment_get(name, op[0], &f, &err)) return ckt_l_error(L, &err);
    ckt_l_push_value(L, CKT_L_FRAGMENT, &f, sizeof f);
    return 1;
}

static ckt_fragment *checkfrag(lua_State *L, int i)
{
    return luaL_checkudata(L, i, CKT_L_FRAGMENT);
}
static int f_tv(lua_State *L)
{
    ckt_l_pushlayout(L, &checkfrag(L, 1)->tv);
    return 1;
}
static int f_index(lua_State *L)
{
    ckt_fragment *f = checkfrag(L, 1);
    const char *k = lua_tostring(L, 2);
    const ckt_l_int_field ints[] = {
        {"rows", f->rows}, {"cols", f->cols}, {"lanes", f->lanes}, {"values", f->values}};
    const ckt_l_str_field strs[] = {{"name", f->name}};
    if (ckt_l_push_int_field(L, k, ints, sizeof ints / sizeof *ints) ||
        ckt_l_push_str_field(L, k, strs, sizeof strs / sizeof *strs))
        return 1;
    if (k && !strcmp(k, "operand")) {
        lua_pushlstring(L, &f->operand, 1);
        return 1;
    }
    return ckt_l_index_method(L, CKT_L_FRAGMENT);
}
static int f_tostring(lua_State *L)
{
    ckt_fragment *f = checkfrag(L, 1);
    char tv[256];
    ckt_layout_to_string(&f->tv, tv, sizeof tv);
    lua_pushfstring(L, "fragment %s %c (%dx%d, %d lanes x %d values): %s", f->name, f->operand,
                    (int)f->rows, (int)f->cols, (int)f->lanes, (int)f->values, tv);
    return 1;
}
static int f_draw(lua_State *L)
{
    int svg = ckt_l_svg(L);
    ckt_fragment *f = checkfrag(L, 1);
    int opts = ckt_l_draw_opts(L, 2, svg, NULL);
    lua_pushcfunction(L, f_tostring);
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return ckt_l_draw_tv(L, &f->tv, f->rows, f->cols, lua_tostring(L, -1), svg, opts);
}
static int f_encoding(lua_State *L)
{
    ckt_encoding e;
    ckt_error err;
    if (ckt_fragment_encoding(checkfrag(L, 1), &e, &err)) return ckt_l_error(L, &err);
    ckt_l_pushencoding(L, &e);
    return 1;
}
static int f_nested(lua_State *L)
{
    ckt_nested n;
    ckt_error err;
    if (ckt_fragment_nested(checkfrag(L, 1), &n, &err)) return ckt_l_error(L, &err);
    ckt_l_pushnested(L, &n);
    return 1;
}

/* ---- the common view ---- */

void ckt_l_to_tv(lua_State *L, int idx, const char *what, ckt_layout *tv)
{
    int arg = idx > 0 ? idx : 0;
    idx = lua_absindex(L, idx);
    ckt_layout *l = ckt_l_testlayout(L, idx);
    if (l) {
        *tv = *l;
        return;
    }
    if (luaL_testudata(L, idx, CKT_L_FRAGMENT)) {
        *tv = checkfrag(L, idx)->tv;
        return;
    }
    ckt_encoding *e = luaL_testudata(L, idx, CKT_L_ENCODING);
    ckt_error err;
    if (e) {
        if (ckt_encoding_tv_layout(e, tv, &err)) ckt_l_error(L, &err);
        return;
    }
    if (luaL_getmetafield(L, idx, "tv_layout") == LUA_TFUNCTION) {
        lua_pushvalue(L, idx);
        lua_call(L, 1, 1);
        l = ckt_l_testlayout(L, -1);
        if (l) {
            *tv = *l;
            lua_pop(L, 1);
            return;
        }
    }
    ckt_l_argerror(
        L, arg,
        "%s%sdistribution (encoding, nested layout, fragment or TV layout) expected, got %s",
        what ? what : "", what ? ": " : "", luaL_typename(L, idx));
}

static int l_same_distribution(lua_State *L)
{
    ckt_layout a, b;
    ckt_l_to_tv(L, 1, NULL, &a);
    ckt_l_to_tv(L, 2, NULL, &b);
    int strict = 0;
    if (!lua_isnoneornil(L, 3)) {
        static const char *const allowed[] = {"strict", NULL};
        ckt_l_check_fields(L, 3, "same_distribution", allowed);
        ckt_l_field_bool(L, 3, "same_distribution", "strict", &strict);
    }
    bool same;
    ckt_error err;
    if (ckt_same_distribution(&a, &b, strict, &same, &err)) return ckt_l_error(L, &err);
    lua_pushboolean(L, same);
    return 1;
}

void ckt_l_open_distribution(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_ENCODING, "__index", e_index},
                                       {CKT_L_ENCODING, "__tostring", e_tostring},
                                       {CKT_L_ENCODING, "ys_lengths", e_ys_lengths},
                                       {CKT_L_ENCODING, "x_lengths", e_x_lengths},
                                       {CKT_L_ENCODING, "num_threads", e_num_threads},
                                       {CKT_L_ENCODING, "num_values", e_num_values},
                                       {CKT_L_ENCODING, "calculate_index", e_calculate_index},
                                       {CKT_L_ENCODING, "owner", e_owner},
                                       {CKT_L_ENCODING, "tv_layout", e_tv_layout},
                                       {CKT_L_ENCODING, "grid", e_draw},
                                       {CKT_L_ENCODING, "svg", e_draw},
                                       {CKT_L_FRAGMENT, "__index", f_index},
                                       {CKT_L_FRAGMENT, "__tostring", f_tostring},
                                       {CKT_L_FRAGMENT, "tv_layout", f_tv},
                                       {CKT_L_FRAGMENT, "encoding", f_encoding},
                                       {CKT_L_FRAGMENT, "nested", f_nested},
                                       {CKT_L_FRAGMENT, "grid", f_draw},
                                       {CKT_L_FRAGMENT, "svg", f_draw},
                                       {CKT_L_MODULE, "tile_distribution_encoding", l_encoding},
                                       {CKT_L_MODULE, "encoding_pattern_2d", l_pattern_2d},
                                       {CKT_L_MODULE, "fragment", l_fragment},
                                       {CKT_L_MODULE, "same_distribution", l_same_distribution},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(
        L, "encoding",
        "A CK Tile encoding (ckt.tile_distribution_encoding, ckt.encoding_pattern_2d, a fragment's "
        "encoding method).\nMethods: "
        "E:ys_lengths() E:x_lengths() E:num_threads() E:num_values() E:calculate_index(tid, ys) -> "
        "xs\n"
        "E:owner(xs) -> tids, ys (several tids when R replicates) E:tv_layout() E:grid() "
        "E:svg{title=, cell=}\n"
        "tostring(E). Thread id = merge of the Ps, P0 most significant (P0 * size(P1) + P1).");
    ckt_l_help_add(L, "encoding_pattern_2d",
                   "ckt.encoding_pattern_2d{block_size=, y_per_tile=, x_per_tile=, vec_size=,\n"
                   "  pattern=\"thread_raked\"|\"warp_raked\"|\"block_raked\", num_wave_groups=1, "
                   "warp_size=64, shuffled=false}\n"
                   "CK's TileDistributionEncodingPattern2D; E.x0 (vector) E.x1 (threads along X) "
                   "E.y0 E.y1 E.y2 as in CK Tile's tile_distribution_encoding_pattern_2d.\n"
                   "Refusals name the broken equation (\"Y0*Y1*Y2 == YPerTile fails: 4*8*1 != "
                   "48\"). See help('encoding').");
    ckt_l_help_add(L, "fragment",
                   "ckt.fragment(name, \"A\"|\"B\"|\"C\"): an MFMA / mma operand fragment: "
                   "mfma_f32_32x32x8f16,\n"
                   "mfma_f32_16x16x16f16 (and bf16_1k twins), mma_m16n8k16. F:tv_layout() (lane, "
                   "register) -> row-major offset,\n"
                   "F:encoding() (a CK encoding), F:nested() (an IREE nested layout), F:grid(), "
                   "F:svg{}; F.rows F.cols F.lanes F.values.");
}
