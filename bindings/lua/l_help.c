/* help(x): short documentation of the ckt functions and types, reachable from the REPL.
 * The texts are a table keyed by name; help(f) finds f's name by identity in `ckt`. */
#include <string.h>

#include "l_internal.h"

static const struct {
    const char *name, *text;
} topics[] = {
    {"ckt", "ckt — a tiling engine for GPU kernel authors. Layouts (ckt.layout), the CuTe algebra, CK Tile\n"
            "distributions, IREE nested layouts, space-filling curves, the LDS bank model and a kernel builder.\n"
            "help(ckt.layout), help('composition'), ... ; help() lists the topics."},
    {"layout", "ckt.layout(shape [, stride | \"row\" | \"col\"]) or ckt.layout(\"(4,(2,8)):(16,(1,2))\")\n"
               "A CuTe layout: shape and stride are integers or nested tables; default stride column-major.\n"
               "Methods: L(i) / L(i, j) / L({i,{j,k}}), :shape() :stride() :size() :cosize() :rank() :depth()\n"
               ":mode(i) :grid() :svg{labels=function(m, n, v) ... end, title=}; tostring; ==."},
    {"coalesce", "ckt.coalesce(L): flatten, drop size-1 modes and merge contiguous ones. Same function, depth <= 1."},
    {"filter", "ckt.filter(L): coalesce after removing stride-0 and size-1 modes."},
    {"composition", "ckt.composition(A, B): R(c) = A(B(c)); B a layout, an integer, or a table tiler per mode.\n"
                    "Refuses when a stride or shape of B does not divide A's (the message names the modes)."},
    {"complement", "ckt.complement(L [, cotarget]): the ordered layout whose codomain is disjoint from L's up to cotarget."},
    {"right_inverse", "ckt.right_inverse(L): R with L(R(i)) == i for i < size(R)."},
    {"left_inverse", "ckt.left_inverse(L): R with R(L(i)) == i for injective L."},
    {"logical_divide", "ckt.logical_divide(A, B | tiler): A o (B, complement(B, size(A))); per mode for a table tiler."},
    {"zipped_divide", "ckt.zipped_divide(A, tiler): ((tiles...), (rests...))."},
    {"tiled_divide", "ckt.tiled_divide(A, tiler): ((tiles...), rest0, rest1, ...)."},
    {"flat_divide", "ckt.flat_divide(A, tiler): (tile0, tile1, ..., rest0, rest1, ...)."},
    {"logical_product", "ckt.logical_product(A, B): (A, complement(A, size(A)*cosize(B)) o B)."},
    {"blocked_product", "ckt.blocked_product(A, B): per mode (A_i, B-repeat_i): A as the block, repeated by B."},
    {"raked_product", "ckt.raked_product(A, B): per mode (B-repeat_i, A_i): A's elements interleaved (raked)."},
    {"zipped_product", "ckt.zipped_product(A, B): the logical product, tiles first."},
    {"tiled_product", "ckt.tiled_product(A, B): (A, rest modes unpacked)."},
    {"make_ordered_layout", "ckt.make_ordered_layout(shape, order): compact strides assigned by increasing order."},
    {"tile_to_shape", "ckt.tile_to_shape(block, shape [, order]): repeat block to cover shape (must divide)."},
    {"max_common_vector", "ckt.max_common_vector(a, b): the number of elements contiguous in both layouts."},
    {"max_common_layout", "ckt.max_common_layout(a, b): the layout of that common vector."},
    {"nullspace", "ckt.nullspace(L): the stride-0 modes of L, as a layout into L's domain."},
    {"make_layout_tv", "ckt.make_layout_tv(thr, val) -> tiler, tv: CuTe's make_tiled_copy (thread, value) -> tile offset."},
    {"local_tile", "ckt.local_tile(L, tiler, coord) -> layout, offset: the tile at coord."},
    {"local_partition", "ckt.local_partition(L, thr_layout, idx) -> layout, offset: the elements thread idx owns."},
    {"pad", "ckt.pad(L, tile_shape): CK wrapper padding: shapes rounded up to multiples of the tile, strides kept."},
    {"swizzle", "ckt.swizzle(B, M, S): Swizzle<B,M,S>, a functor sw(x) = x ^ ((x & mask) >> S)."},
    {"composed", "ckt.composed(sw, offset, L): the ComposedLayout c -> sw(offset + L(c)); usable like a layout."},
    {"default_target", "ckt.default_target(): the compile target set by ckt-lua --target (default \"cpu\")."},
    {"version", "ckt.version: the version string."},
    {NULL, NULL}};

static int find_topic(const char *name)
{
    for (int i = 0; topics[i].name; i++)
        if (strcmp(topics[i].name, name) == 0) return i;
    return -1;
}

/* help(), help("name"), help(ckt.fn), help(obj) (its type) */
static int l_help(lua_State *L)
{
    const char *name = NULL;
    if (lua_isnoneornil(L, 1)) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addstring(&b, topics[0].text);
        luaL_addstring(&b, "\nTopics:");
        for (int i = 1; topics[i].name; i++) {
            luaL_addstring(&b, i % 6 == 1 ? "\n  " : " ");
            luaL_addstring(&b, topics[i].name);
        }
        luaL_pushresult(&b);
    } else {
        if (lua_type(L, 1) == LUA_TSTRING) {
            name = lua_tostring(L, 1);
            if (strncmp(name, "ckt.", 4) == 0) name += 4;
        } else if (lua_type(L, 1) == LUA_TUSERDATA && luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) {
            name = lua_tostring(L, -1);
            if (strncmp(name, "ckt.", 4) == 0) name += 4;
        } else {
            /* a function: look its name up in the ckt table */
            lua_getglobal(L, "package");
            lua_getfield(L, -1, "loaded");
            lua_getfield(L, -1, "ckt");
            if (lua_istable(L, -1)) {
                lua_pushnil(L);
                while (lua_next(L, -2)) {
                    if (lua_rawequal(L, -1, 1) && lua_type(L, -2) == LUA_TSTRING) {
                        name = lua_tostring(L, -2);
                        lua_pop(L, 2);
                        break;
                    }
                    lua_pop(L, 1);
                }
            }
        }
        int t = name ? find_topic(name) : -1;
        if (t < 0) lua_pushfstring(L, "no help for %s; help() lists the topics", name ? name : luaL_typename(L, 1));
        else lua_pushstring(L, topics[t].text);
    }
    /* print in the REPL, and return the text for scripts */
    lua_getglobal(L, "print");
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);
    return 1;
}

void ckt_l_open_help(lua_State *L)
{
    lua_pushcfunction(L, l_help);
    lua_setfield(L, -2, "help");
}
