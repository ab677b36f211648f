/* ckt — embedding the Lua front-end in a C application.
 *
 *   ckt_lua *s;  ckt_error err;
 *   ckt_lua_options o = {.sandbox = 1, .memory_limit = 64 << 20, .instruction_limit = 100000000};
 *   if (ckt_lua_open(&o, &s, &err)) { puts(err.msg); return 1; }
 *   if (ckt_lua_run_string(s, "print(ckt.layout{4,8})", "=host", &err)) puts(err.msg);
 *   ckt_lua_close(s);
 *
 * A sandboxed state has no io, no os.execute/remove/rename/exit/getenv, no package.loadlib,
 * no C-module or file-based module loading, no debug library, no binary chunks; a memory cap
 * (a counting allocator) and an instruction budget (a count hook, reset for each run) stop
 * runaway scripts with a clear error and leave the host and the state usable. The limits hold
 * inside C too (docs/cli.md): with a budget or a time limit, string.find/match/gmatch/gsub/rep and
 * table.concat charge their steps to the run; the run's end is the compile deadline of the
 * running thread (ckt_compile_set_deadline: the host C compiler is killed at it, an NVRTC /
 * hipRTC compile abandoned) and the launch deadline (the CPU runtime stops between blocks). */
#ifndef CKT_LUA_H
#define CKT_LUA_H

#include <stddef.h>
#include <stdint.h>

#include "ckt/ckt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lua_State lua_State;
typedef struct ckt_lua ckt_lua;

typedef struct ckt_lua_options {
    int sandbox;                /* nonzero: untrusted scripts (see above) */
    size_t memory_limit;        /* bytes the Lua state may hold; 0 = unlimited */
    uint64_t instruction_limit; /* Lua VM instructions per run; 0 = unlimited */
    double time_limit;          /* seconds of wall-clock per run, compiles and launches
                                   included (see above); 0 = unlimited */
    const char *target;         /* default compile target (NULL: "cpu") */
} ckt_lua_options;

ckt_status ckt_lua_open(const ckt_lua_options *opts, ckt_lua **out, ckt_error *err);
void ckt_lua_close(ckt_lua *s);
lua_State *ckt_lua_state(ckt_lua *s);
/* Run code / a file; on error err->msg holds "chunk:line: message" (CKT_ELIMIT for a cap). */
ckt_status ckt_lua_run_string(ckt_lua *s, const char *code, const char *chunkname, ckt_error *err);
ckt_status ckt_lua_run_file(ckt_lua *s, const char *path, ckt_error *err);
size_t ckt_lua_memory_used(const ckt_lua *s);

/* Add ckt to an existing lua_State: package.loaded.ckt and the global `ckt`. Returns 1 (the
 * module). */
int ckt_lua_openlib(lua_State *L);
int luaopen_ckt(lua_State *L);
/* Prepend $CKT_PATH's directories and the kernel library (source tree, then installed datadir)
 * to package.path. ckt-lua and unsandboxed ckt_lua_open states do this already. */
void ckt_lua_add_path(lua_State *L);
/* Is name a compile target: cpu, cpu:<gpu>, a modelled GPU, or an AMD (gfx...) or NVIDIA (sm_...)
 * architecture? */
ckt_status ckt_lua_check_target(const char *name, ckt_error *err);

#ifdef __cplusplus
}
#endif
#endif
