/* Lua: streams (dev:stream()), events (s:record()) and graphs (dev:capture(fn)) over the engine's
 * ckt/stream.h. Streams and graphs are to-be-closed; closing a stream synchronizes it (and raises
 * its pending error), collecting one drops the error silently. */
#include <stdint.h>
#include <time.h>

#include "ckt/stream.h"
#include "l_internal.h"

#define CKT_L_STREAM "ckt.stream"
#define CKT_L_EVENT "ckt.event"
#define CKT_L_GRAPH "ckt.graph"

typedef ckt_l_stream l_stream;
typedef struct {
    ckt_event *e;
} l_event;
typedef struct {
    ckt_graph *g;
} l_graph;

void ckt_l_pushstream(lua_State *L, ckt_stream *s, bool owned)
{
    l_stream *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->s = NULL;
    u->owned = owned;
    luaL_setmetatable(L, CKT_L_STREAM);
    if (!owned) ckt_device_retain(ckt_stream_device(s)); /* the stream lives in the device */
    u->s = s;
}

/* what closing the userdata releases: its stream, or the device a default stream lives in */
static ckt_status release(l_stream *u, ckt_error *err)
{
    ckt_stream *s = u->s;
    u->s = NULL;
    if (!s) return CKT_OK;
    if (u->owned) return ckt_stream_destroy(s, err);
    ckt_device_close(ckt_stream_device(s));
    return CKT_OK;
}

static l_stream *checkstream(lua_State *L, int idx)
{
    l_stream *u = luaL_checkudata(L, idx, CKT_L_STREAM);
    if (!u->s) ckt_l_errorf(L, "stream: used after close");
    return u;
}

static int s_close(lua_State *L)
{
    ckt_error err;
    if (release(luaL_checkudata(L, 1, CKT_L_STREAM), &err)) return ckt_l_error(L, &err);
    return 0;
}

static int s_gc(lua_State *L)
{
    release(luaL_checkudata(L, 1, CKT_L_STREAM), NULL);
    return 0;
}

static int s_synchronize(lua_State *L)
{
    ckt_error err;
    if (ckt_stream_synchronize(checkstream(L, 1)->s, &err)) return ckt_l_error(L, &err);
    return 0;
}

static void pushevent(lua_State *L, ckt_event *e)
{
    l_event *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->e = e;
    luaL_setmetatable(L, CKT_L_EVENT);
}

/* s:record() -> an event at the stream's current end */
static int s_record(lua_State *L)
{
    ckt_stream *s = checkstream(L, 1)->s;
    ckt_event *e;
    ckt_error err;
    if (ckt_stream_record(s, &e, &err)) return ckt_l_error(L, &err);
    pushevent(L, e);
    return 1;
}

static l_event *checkevent(lua_State *L, int idx, int arg)
{
    if (!luaL_testudata(L, idx, CKT_L_EVENT))
        ckt_l_argerror(L, arg, "expected an event (s:record()), got %s", ckt_l_typename(L, idx));
    l_event *u = lua_touserdata(L, idx);
    if (!u->e) ckt_l_errorf(L, "event: used after close");
    return u;
}

/* s:wait(e): later work on s waits for e */
static int s_wait(lua_State *L)
{
    ckt_stream *s = checkstream(L, 1)->s;
    ckt_error err;
    if (ckt_stream_wait(s, checkevent(L, 2, 1)->e, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* s:handle() -> the native stream (CUstream / hipStream_t) as an integer, for another library
 * in the same process (0: the default stream, and on cpu) */
static int s_handle(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)(uintptr_t)ckt_stream_native(checkstream(L, 1)->s));
    return 1;
}

static int s_tostring(lua_State *L)
{
    l_stream *u = luaL_checkudata(L, 1, CKT_L_STREAM);
    if (!u->s)
        lua_pushliteral(L, "ckt.stream (closed)");
    else
        lua_pushfstring(L, "ckt.stream(%s%son %s)", u->owned ? "" : "default ",
                        ckt_stream_capturing(u->s) ? "capturing " : "",
                        ckt_device_name(ckt_stream_device(u->s)));
    return 1;
}

CKT_L_CLOSER(e_close, l_event, CKT_L_EVENT, e, ckt_event_free)

static int e_synchronize(lua_State *L)
{
    ckt_error err;
    if (ckt_event_synchronize(checkevent(L, 1, 0)->e, &err)) return ckt_l_error(L, &err);
    return 0;
}

/* e:query() -> whether the event has completed (never waits) */
static int e_query(lua_State *L)
{
    bool done = false;
    ckt_error err;
    if (ckt_event_query(checkevent(L, 1, 0)->e, &done, &err)) return ckt_l_error(L, &err);
    lua_pushboolean(L, done);
    return 1;
}

/* e1:elapsed(e2) -> milliseconds from e1 to e2 (waits for both) */
static int e_elapsed(lua_State *L)
{
    ckt_event *a = checkevent(L, 1, 0)->e, *b = checkevent(L, 2, 1)->e;
    double ms = 0;
    ckt_error err;
    if (ckt_event_elapsed(a, b, &ms, &err)) return ckt_l_error(L, &err);
    lua_pushnumber(L, ms);
    return 1;
}

static int e_tostring(lua_State *L)
{
    l_event *u = luaL_checkudata(L, 1, CKT_L_EVENT);
    lua_pushstring(L, u->e ? "ckt.event" : "ckt.event (closed)");
    return 1;
}

static l_graph *checkgraph(lua_State *L, int idx)
{
    l_graph *u = luaL_checkudata(L, idx, CKT_L_GRAPH);
    if (!u->g) ckt_l_errorf(L, "graph: used after close");
    return u;
}

/* dev:default_stream() -> the device's default stream (closing it does nothing) */
static int d_default_stream(lua_State *L)
{
    ckt_l_pushstream(L, ckt_device_stream(ckt_l_checkdevice(L, 1)), false);
    return 1;
}

/* dev:stream() -> a new stream on the device (to-be-closed: closing synchronizes it) */
static int d_stream(lua_State *L)
{
    ckt_stream *s;
    ckt_error err;
    if (ckt_stream_create(ckt_l_checkdevice(L, 1), &s, &err)) return ckt_l_error(L, &err);
    ckt_l_pushstream(L, s, true);
    return 1;
}

/* dev:capture(function(s) ... end) -> a graph of the launches made on s inside */
static int d_capture(lua_State *L)
{
    ckt_device *dev = ckt_l_checkdevice(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    l_graph *g = lua_newuserdatauv(L, sizeof *g, 0); /* 3: the result, collected on errors */
    g->g = NULL;
    luaL_setmetatable(L, CKT_L_GRAPH);
    ckt_stream *s;
    ckt_error err;
    if (ckt_stream_create(dev, &s, &err)) return ckt_l_error(L, &err);
    ckt_l_pushstream(L, s, true); /* 4: closed by its __gc if anything below raises */
    if (ckt_stream_begin_capture(s, &err)) return ckt_l_error(L, &err);
    l_stream *su = lua_touserdata(L, 4);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 4);
    int rc = lua_pcall(L, 1, 0, 0);
    if (!su->s) { /* closed inside: ckt_stream_destroy dropped the capture with the stream */
        if (rc != LUA_OK) return lua_error(L);
        return ckt_l_errorf(L, "capture: the stream was closed inside the capture function");
    }
    ckt_status st = ckt_stream_end_capture(s, &g->g, &err);
    su->s = NULL; /* the capture's stream ends with it (a copy kept by the function is closed) */
    ckt_stream_destroy(s, NULL);
    if (rc != LUA_OK) { /* the function's error wins; a graph made anyway is dropped */
        ckt_graph_free(g->g);
        g->g = NULL;
        return lua_error(L);
    }
    if (st) return ckt_l_error(L, &err);
    lua_settop(L, 3);
    return 1;
}

/* g:launch([stream]): replay the captured launches on the stream (default: the device's) */
static int g_launch(lua_State *L)
{
    ckt_graph *g = checkgraph(L, 1)->g;
    ckt_stream *s = ckt_l_optstream(L, 2, "graph launch");
    ckt_error err;
    if (ckt_graph_launch(g, s, &err)) return ckt_l_error(L, &err);
    return 0;
}

static int g_launches(lua_State *L)
{
    lua_pushinteger(L, ckt_graph_launch_count(checkgraph(L, 1)->g));
    return 1;
}

CKT_L_CLOSER(g_close, l_graph, CKT_L_GRAPH, g, ckt_graph_free)

static int g_tostring(lua_State *L)
{
    l_graph *u = luaL_checkudata(L, 1, CKT_L_GRAPH);
    if (!u->g)
        lua_pushliteral(L, "ckt.graph (closed)");
    else
        lua_pushfstring(L, "ckt.graph(%d launches)", ckt_graph_launch_count(u->g));
    return 1;
}

/* ckt.now() -> seconds of a monotonic clock (for timing what an application sees) */
static int l_now(lua_State *L)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    lua_pushnumber(L, (lua_Number)t.tv_sec + 1e-9 * (lua_Number)t.tv_nsec);
    return 1;
}

void ckt_l_open_stream(lua_State *L)
{
    static const ckt_l_entry rows[] = {{CKT_L_STREAM, "__close", s_close},
                                       {CKT_L_STREAM, "__gc", s_gc},
                                       {CKT_L_STREAM, "__tostring", s_tostring},
                                       {CKT_L_STREAM, "close", s_close},
                                       {CKT_L_STREAM, "synchronize", s_synchronize},
                                       {CKT_L_STREAM, "record", s_record},
                                       {CKT_L_STREAM, "wait", s_wait},
                                       {CKT_L_STREAM, "handle", s_handle},
                                       {CKT_L_EVENT, "__close", e_close},
                                       {CKT_L_EVENT, "__gc", e_close},
                                       {CKT_L_EVENT, "__tostring", e_tostring},
                                       {CKT_L_EVENT, "close", e_close},
                                       {CKT_L_EVENT, "synchronize", e_synchronize},
                                       {CKT_L_EVENT, "query", e_query},
                                       {CKT_L_EVENT, "elapsed", e_elapsed},
                                       {CKT_L_GRAPH, "__close", g_close},
                                       {CKT_L_GRAPH, "__gc", g_close},
                                       {CKT_L_GRAPH, "__tostring", g_tostring},
                                       {CKT_L_GRAPH, "close", g_close},
                                       {CKT_L_GRAPH, "launch", g_launch},
                                       {CKT_L_GRAPH, "launches", g_launches},
                                       {"ckt.device", "capture", d_capture},
                                       {"ckt.device", "stream", d_stream},
                                       {"ckt.device", "default_stream", d_default_stream},
                                       {CKT_L_MODULE, "now", l_now},
                                       {NULL, NULL, NULL}};
    ckt_l_register(L, rows);
    ckt_l_help_add(L, "now",
                   "ckt.now() -> seconds of a monotonic clock (CLOCK_MONOTONIC), for timing "
                   "what an application sees: the wall clock over a loop of launches");
    ckt_l_help_add(
        L, "stream",
        "Streams, events, graphs (docs/launch.md). dev:stream() -> s (to-be-closed; closing "
        "synchronizes); dev:default_stream(); exe:launch{grid=, stream=s, ...} enqueues and "
        "returns "
        "(timed = true waits and returns the kernel's ms); s:synchronize(), dev:synchronize() wait "
        "and "
        "raise the first error of the work, naming its launch; s:record() -> e; e:synchronize(), "
        "e:query(), e1:elapsed(e2) -> ms; s:wait(e) orders s after e; buf:upload(a, {stream=s}), "
        "buf:download(a, {stream=s}); dev:capture(function(s) ... end) -> g, g:launch([stream]) "
        "replays the captured launches; s:handle() -> the native stream as an integer.");
    ckt_l_help_add(L, "event",
                   "An event (what a stream's record returns): e:synchronize() waits for the work "
                   "before it, e:query() "
                   "-> true once that work has ended, e1:elapsed(e2) -> the milliseconds between "
                   "them; e:close() or <close>. help('stream').");
    ckt_l_help_add(L, "graph",
                   "A graph (what a device's capture returns): g:launch([stream]) replays the "
                   "captured launches as one, g:launches() -> how many it holds; g:close() or "
                   "<close>. help('stream').");
}
