/* help(x): short documentation of the ckt functions and types, reachable from the REPL.
 * Built-in texts are the table below; more are added at run time (ckt.add_help from Lua,
 * ckt_l_help_add from a binding file). help(f) finds f's name by identity in `ckt` (and one
 * level down: ckt.lds.analyze is "lds.analyze"); help(obj) shows the help of obj's type. */
#include <string.h>

#include "l_internal.h"

static const struct {
    const char *name, *text;
} topics[] = {
    {"ckt", "ckt — a tiling engine for GPU kernel authors. Layouts (ckt.layout), the CuTe algebra, "
            "CK Tile\n"
            "distributions, IREE nested layouts, space-filling curves, the LDS bank model and a "
            "kernel builder.\n"
            "help(ckt.layout), help('composition'), ... ; help() lists the topics."},
    {"layout",
     "ckt.layout(shape [, stride | \"row\" | \"col\"]) or ckt.layout(\"(4,(2,8)):(16,(1,2))\")\n"
     "A CuTe layout: shape and stride are integers or nested tables; default stride column-major.\n"
     "Methods: L(i) / L(i, j) / L({i,{j,k}}), :shape() :stride() :size() :cosize() :rank() "
     ":depth()\n"
     ":mode(i) :grid() :svg{labels=function(m, n, v) ... end, title=}; tostring; ==."},
    {"coalesce", "ckt.coalesce(L): flatten, drop size-1 modes and merge contiguous ones. Same "
                 "function, depth <= 1."},
    {"filter", "ckt.filter(L): coalesce after removing stride-0 and size-1 modes."},
    {"composition",
     "ckt.composition(A, B): R(c) = A(B(c)); B a layout, an integer, or a table tiler per mode.\n"
     "Refuses when a stride or shape of B does not divide A's (the message names the modes)."},
    {"complement", "ckt.complement(L [, cotarget]): the ordered layout whose codomain is disjoint "
                   "from L's up to cotarget."},
    {"right_inverse", "ckt.right_inverse(L): R with L(R(i)) == i for i < size(R)."},
    {"left_inverse", "ckt.left_inverse(L): R with R(L(i)) == i for injective L."},
    {"logical_divide", "ckt.logical_divide(A, B | tiler): A o (B, complement(B, size(A))); per "
                       "mode for a table tiler."},
    {"zipped_divide", "ckt.zipped_divide(A, tiler): ((tiles...), (rests...))."},
    {"tiled_divide", "ckt.tiled_divide(A, tiler): ((tiles...), rest0, rest1, ...)."},
    {"flat_divide", "ckt.flat_divide(A, tiler): (tile0, tile1, ..., rest0, rest1, ...)."},
    {"logical_product", "ckt.logical_product(A, B): (A, complement(A, size(A)*cosize(B)) o B). B "
                        "may be a tuple of per-mode\n"
                        "tilers {B0, B1, ...} (layouts, integers n = n:1, or shapes), applied mode "
                        "by mode as CuTe does:\n"
                        "(A0 x B0, A1 x B1, A2, ...)."},
    {"blocked_product",
     "ckt.blocked_product(A, B): per mode (A_i, B-repeat_i): A as the block, repeated by B.\n"
     "B is one layout (CuTe's rank-sensitive products take no tuple of tilers)."},
    {"raked_product",
     "ckt.raked_product(A, B): per mode (B-repeat_i, A_i): A's elements interleaved (raked).\n"
     "B is one layout, as in CuTe."},
    {"zipped_product", "ckt.zipped_product(A, B): the logical product gathered as ((blocks...), "
                       "(rests..., other modes));\n"
                       "B one layout or a tuple of per-mode tilers."},
    {"tiled_product", "ckt.tiled_product(A, B): ((blocks...), rests..., other modes): the zipped "
                      "product, rests unpacked."},
    {"flat_product", "ckt.flat_product(A, B): (blocks..., rests..., other modes): the zipped "
                     "product, both modes unpacked."},
    {"make_ordered_layout",
     "ckt.make_ordered_layout(shape, order): compact strides assigned by increasing order."},
    {"tile_to_shape",
     "ckt.tile_to_shape(block, shape [, order]): repeat block to cover shape (must divide)."},
    {"max_common_vector",
     "ckt.max_common_vector(a, b): the number of elements contiguous in both layouts."},
    {"max_common_layout", "ckt.max_common_layout(a, b): the layout of that common vector."},
    {"nullspace", "ckt.nullspace(L): the stride-0 modes of L, as a layout into L's domain."},
    {"make_layout_tv", "ckt.make_layout_tv(thr, val) -> tiler, tv: CuTe's make_tiled_copy (thread, "
                       "value) -> tile offset."},
    {"local_tile", "ckt.local_tile(L, tiler, coord) -> layout, offset: the tile at coord. On a "
                   "kernel tensor: the tile window at coord."},
    {"local_partition", "ckt.local_partition(L, thr_layout, idx) -> layout, offset: the elements "
                        "thread idx owns. On a kernel tensor or "
                        "window with idx = b:thread_id(): the window of the elements each thread "
                        "owns (CuTe's interleaved partition; "
                        "options scalar_per_vector=, vector_dim=, values=, packed=)."},
    {"pad", "ckt.pad(L, tile_shape): CK wrapper padding: shapes rounded up to multiples of the "
            "tile, strides kept."},
    {"swizzle", "ckt.swizzle(B, M, S): Swizzle<B,M,S>, a functor sw(x) = x ^ ((x & mask) >> S)."},
    {"composed", "ckt.composed(sw, offset, L): the ComposedLayout c -> sw(offset + L(c)); usable "
                 "like a layout."},
    {"tile_distribution_encoding",
     "ckt.tile_distribution_encoding{rs=, hs=, ps_to_rhs_major=, ps_to_rhs_minor=,\n"
     "  ys_to_rhs_major=, ys_to_rhs_minor=}: a CK Tile distribution encoding (CK's meaning:\n"
     "major 0 is R, major i >= 1 is H_{i-1}). Validation names the broken rule. See "
     "help('encoding')."},
    {"encoding",
     "A CK Tile encoding (ckt.tile_distribution_encoding, ckt.encoding_pattern_2d). Methods:\n"
     "E:ys_lengths() E:x_lengths() E:num_threads() E:calculate_index(tid, ys) E:owner(xs) -> tids, "
     "ys\n"
     "E:tv_layout() E:grid() E:svg(); tostring(E)."},
    {"encoding_pattern_2d",
     "ckt.encoding_pattern_2d{block_size=, y_per_tile=, x_per_tile=, vec_size=,\n"
     "  pattern=\"thread_raked\"|\"warp_raked\"|\"block_raked\", num_wave_groups=1, warp_size=64}\n"
     "CK's 2D static encoding patterns; E.x0 E.x1 E.y0 E.y1 E.y2 as in CK Tile's pattern_2d. See "
     "help('encoding')."},
    {"nested_layout",
     "ckt.nested_layout{subgroup_tile=, batch_tile=, outer_tile=, thread_tile=, element_tile=,\n"
     "  subgroup_strides=, thread_strides=}: an IREE nested layout, normalised and verified.\n"
     "Methods: N:undistributed_shape() N:packed_shape() N:distributed_shape()\n"
     "N:elements(tid [, subgroup_size]) N:tv_layout([subgroup_size]) N:grid() N:svg()."},
    {"fragment",
     "ckt.fragment(name, \"A\"|\"B\"|\"C\"): the TV layout of an MFMA / mma operand, e.g.\n"
     "mfma_f32_32x32x8f16, mfma_f32_16x16x16f16 (and bf16_1k twins), mma_m16n8k16."},
    {"same_distribution",
     "ckt.same_distribution(a, b [, {strict = true}]): true when every thread owns the same\n"
     "elements (encodings, nested layouts, fragments, TV layouts); strict: same value order too."},
    {"sfc", "ckt.sfc{lengths=, order=, scalars_per_access=, snake=false}: CK's space-filling curve "
            "(every level\n"
            "snakes). S:index(i) -> coord [, partial], S:step(i, j), S:forward_step(i), "
            "S:backward_step(i),\n"
            "for i, c in S:iter() do ... end, S:locality{sequential=1, cache_line=16}."},
    {"target", "ckt.target([name]): cpu, cpu:<gpu>, gfx908 gfx90a gfx942 gfx950 sm_80 sm_90 sm_90a "
               "(default: the default\n"
               "target): the parsed target (target, arch, dialect, compiler, runtime, emulated, "
               "emulates, lds_static_bytes,\n"
               "lds_max_bytes) and the hardware model of the GPU it compiles for or emulates "
               "(name, vendor, wave size, LDS\n"
               "banks, bank width, LDS bytes, matrix instructions, the lane phases of each LDS "
               "instruction). A bare cpu\n"
               "emulates gfx90a. .hw: capabilities (tma, wgmma) and an SM / CU's resources "
               "(sm_count, regs_per_sm,\n"
               "regs_per_thread_max, reg_granule, lds_per_sm, lds_per_block, threads_per_sm_max, "
               "blocks_per_sm_max, ...)."},
    {"occupancy", "ckt.occupancy(target, {threads=, registers=0, lds_bytes=0}) -> blocks_per_sm, "
                  "limiter: the blocks one\n"
                  "SM / CU holds at once and what bounds them (\"blocks\", \"threads\", "
                  "\"registers\" or \"lds\")."},
    {"lds", "ckt.lds: the LDS bank model. help('lds.analyze'), help('lds.analyze_tensor'), "
            "help('lds.pad'),\n"
            "help('lds.xor_preshuffle'), help('lds.find_swizzle')."},
    {"lds.analyze",
     "ckt.lds.analyze{target=, instr=, addresses=, svg=false}: one byte address per lane (false:\n"
     "inactive) -> {ways, cycles, ideal_cycles, phases = {{lanes, banks, ways}, ...}, report [, "
     "svg]}."},
    {"lds.analyze_tensor",
     "ckt.lds.analyze_tensor{target=, tensor_layout=, dtype=, thread_map=, vector=, op=}:\n"
     "a whole tile access; thread_map maps (thread, value) to the first element of each vector."},
    {"lds.pad", "ckt.lds.pad(layout, banks [, dtype]) -> padded layout, extra bytes."},
    {"lds.xor_preshuffle", "ckt.lds.xor_preshuffle(k_per_block, k_pack [, rows]): the XOR "
                           "preshuffle of AMD's note on LDS bank conflicts as the\n"
                           "composed layout Sw<B,M,B> o (rows,K):(K,1)."},
    {"lds.find_swizzle",
     "ckt.lds.find_swizzle{target=, layout=, dtype=, write={thread_map=, vector=},\n"
     "  read={thread_map=, vector=}, max_padding_banks=8}: swizzles first, then paddings; the "
     "cheapest\n"
     "conflict-free choice (conflict_free = true) or the best found."},
    {"default_target",
     "ckt.default_target(): the compile target set by ckt-lua --target (default \"cpu\")."},
    {"set_default_target",
     "ckt.set_default_target(name): change the default compile target (validated)."},
    {"help", "help(), help(\"name\"), help(ckt.fn), help(obj): print these texts; ckt.help_text(x) "
             "returns\n"
             "the text and whether a topic was found; ckt.add_help(name, text) adds a topic."},
    {"help_text", "ckt.help_text(x) -> text, found: what help(x) prints."},
    {"add_help", "ckt.add_help(name, text): add (or replace) a help topic, e.g. for a Lua-side "
                 "kernel library."},
    {"version", "ckt.version: the version string."},
    {NULL, NULL}};

/* Topics added at run time (ckt.add_help, ckt_l_help_add) live in a registry table and win
 * over the built-in ones, so a binding file or a Lua library can document itself. */
static const char *const ADDED = "ckt.help_topics";

static void push_added(lua_State *L)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, ADDED) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, ADDED);
    }
}

void ckt_l_help_add(lua_State *L, const char *name, const char *text)
{
    push_added(L);
    ckt_l_set_string(L, name, text);
    lua_pop(L, 1);
}

static int l_add_help(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    const char *text = luaL_checkstring(L, 2);
    if (!*name) return luaL_argerror(L, 1, "the topic name is empty");
    if (!*text) return luaL_argerror(L, 2, "the help text is empty");
    ckt_l_help_add(L, name, text);
    return 0;
}

static int builtin(const char *name)
{
    for (int i = 0; topics[i].name; i++)
        if (strcmp(topics[i].name, name) == 0) return 1;
    return 0;
}

/* Pushes the text of a topic, or nothing (returns 0). */
static int push_topic(lua_State *L, const char *name)
{
    if (strncmp(name, "ckt.", 4) == 0) name += 4;
    push_added(L);
    if (lua_getfield(L, -1, name) == LUA_TSTRING) {
        lua_remove(L, -2);
        return 1;
    }
    lua_pop(L, 2);
    for (int i = 0; topics[i].name; i++)
        if (strcmp(topics[i].name, name) == 0) {
            lua_pushstring(L, topics[i].text);
            return 1;
        }
    return 0;
}

/* The name of value v in table t ("name"), or one level down ("sub.name"); pushes it or nothing. */
static int push_name_in(lua_State *L, int t, int v, int depth)
{
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            if (lua_rawequal(L, -1, v)) {
                lua_pop(L, 1);
                return 1; /* the key is left on the stack */
            }
            if (depth > 0 && lua_istable(L, -1) && push_name_in(L, lua_gettop(L), v, depth - 1)) {
                lua_pushfstring(L, "%s.%s", lua_tostring(L, -3), lua_tostring(L, -1));
                lua_replace(L, -4);
                lua_pop(L, 2);
                return 1;
            }
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* The index: the intro, then the topic names six to a line. The run-time topics are collected
 * into a table first: a luaL_Buffer must not have other values pushed above it. */
static void push_index(lua_State *L)
{
    push_added(L);
    int added = lua_gettop(L);
    lua_newtable(L);
    int names = lua_gettop(L), n = 0;
    for (int i = 1; topics[i].name; i++) {
        lua_pushstring(L, topics[i].name);
        lua_rawseti(L, names, ++n);
    }
    lua_pushnil(L);
    while (lua_next(L, added)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING &&
            !builtin(lua_tostring(L, -1))) { /* a refined built-in is listed once */
            lua_pushvalue(L, -1);
            lua_rawseti(L, names, ++n);
        }
    }
    push_topic(L, "ckt");
    int intro = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, lua_tostring(L, intro));
    luaL_addstring(&b, "\nTopics:");
    for (int i = 1; i <= n; i++) {
        luaL_addstring(&b, (i - 1) % 6 == 0 ? "\n  " : " ");
        lua_rawgeti(L, names, i);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    lua_replace(L, added);
    lua_settop(L, added);
}

/* Pushes the text for help's argument at index 1 and whether a topic was found. */
static int push_help(lua_State *L)
{
    lua_settop(L, 1);
    int found = 1;
    const char *name = NULL;
    if (lua_isnil(L, 1)) {
        push_index(L);
    } else {
        if (lua_type(L, 1) == LUA_TSTRING) {
            name = lua_tostring(L, 1);
        } else if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) {
            name = lua_tostring(L, -1); /* a ckt object: the help of its type */
        } else {
            lua_getglobal(L, "package");
            lua_getfield(L, -1, "loaded");
            lua_getfield(L, -1, "ckt");
            if (lua_istable(L, -1) && push_name_in(L, lua_gettop(L), 1, 1))
                name = lua_tostring(L, -1);
        }
        if (!name || !push_topic(L, name)) {
            found = 0;
            lua_pushfstring(L, "no help for %s; help() lists the topics",
                            name ? name : luaL_typename(L, 1));
        }
    }
    lua_pushboolean(L, found);
    return 2;
}

/* help(x) prints (it is meant for the REPL, where a returned text would print twice) */
static int l_help(lua_State *L)
{
    push_help(L);
    lua_getglobal(L, "print");
    lua_pushvalue(L, -3);
    lua_call(L, 1, 0);
    return 0;
}

/* ckt.help_text(x) -> text, found: the same text for scripts and tests */
static int l_help_text(lua_State *L) { return push_help(L); }

void ckt_l_open_help(lua_State *L)
{
    ckt_l_set_function(L, "help", l_help);
    ckt_l_set_function(L, "help_text", l_help_text);
    ckt_l_set_function(L, "add_help", l_add_help);
}
