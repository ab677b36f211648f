/* Shared by the JIT backends (not installed). */
#ifndef CKT_JIT_INTERNAL_H
#define CKT_JIT_INTERNAL_H

#include "ckt/jit.h"
#include "ckt/target.h"

struct ckt_binary {
    char target[32];
    ckt_target_record record; /* target, parsed: what the launch checks the device against */
    char compiler[192];
    uint8_t *code;
    size_t code_size;
    ckt_resources res;
    int64_t dynamic_shared; /* ckt_binary_dynamic_shared_bytes (from the source, not cached) */
    char *log;
    char *disasm;
    int disasm_done;        /* disassembly runs on first request, not in the compile path */
    char disasm_cmd[3][64]; /* the disassembler and its options; empty: none */
    const char *disasm_suffix;
    char disasm_note[320]; /* why there is no disassembly */
    double ms;
    char kernel_name[128];
    int from_cache, compile_only;
    char cache_status[512]; /* ckt_binary_cache_status */
    uint64_t id;            /* unique per process: runtimes key their loaded modules on it */
    _Atomic int refs;       /* ckt_binary_retain / ckt_binary_free */
};

ckt_binary *ckt_binary_new(const ckt_target_record *target);
uint64_t ckt_binary_id(const ckt_binary *b);
double ckt_jit_now_ms(void);
int ckt_jit_run(char *const argv[], const char *stdin_file, char **out);
void ckt_jit_disassemble(ckt_binary *b, const char *const *argv_prefix, int nprefix,
                         const char *suffix);
/* A compiler: it builds req's source for t (its architecture is what it compiles for) into b,
 * and names itself and its version for the cache key (loading its library on first use). */
typedef struct ckt_jit_backend {
    ckt_status (*compile)(const ckt_compile_request *req, unsigned flags,
                          const ckt_target_record *t, ckt_binary *b, ckt_error *err);
    ckt_status (*identity)(char *out, size_t cap, ckt_error *err);
} ckt_jit_backend;
extern const ckt_jit_backend ckt_jit_backend_cpu, ckt_jit_backend_hip, ckt_jit_backend_cuda;
const ckt_jit_backend *ckt_jit_backend_for(ckt_compiler_kind c); /* jit.c */
/* CKT_COMPILE_SANDBOXED: the options and the source's preprocessor lines (jit_sandbox.c) */
ckt_status ckt_jit_check_sandboxed(const ckt_compile_request *req, const ckt_target_record *t,
                                   ckt_error *err);

/* NVRTC and hipRTC: one API under two prefixes (nvrtc*, hiprtc*), loaded at run time; the entry
 * points ckt uses. */
typedef struct ckt_rtc_program *ckt_rtc_program;
typedef struct ckt_rtc {
    void *lib;        /* set once bound */
    const char *name; /* the library it came from */
    int (*create)(ckt_rtc_program *, const char *, const char *, int, const char *const *,
                  const char *const *);
    int (*compile)(ckt_rtc_program, int, const char *const *);
    int (*log_size)(ckt_rtc_program, size_t *);
    int (*log)(ckt_rtc_program, char *);
    int (*code_size)(ckt_rtc_program, size_t *);
    int (*code)(ckt_rtc_program, char *);
    int (*destroy)(ckt_rtc_program *);
    int (*version)(int *, int *); /* optional */
} ckt_rtc;
/* load_locked() under a lock: the library loads once per process, also when compiles run on
 * several threads (ckt/autotune.h). */
ckt_status ckt_rtc_load(ckt_status (*load_locked)(ckt_error *), ckt_error *err);
/* Bind r to lib, the library ckt_dynlib_open found and named in r->name (NULL: none was found,
 * the error says not_found): its entry points, prefix "nvrtc" or "hiprtc"; code names the code
 * object's getters ("CUBIN": nvrtcGetCUBIN, "Code": hiprtcGetCode). When a required one is missing
 * (lib is closed), the error is "<what> in <library> lacks the <prefix>* entry points<hint>". */
ckt_status ckt_rtc_bind(ckt_rtc *r, void *lib, const char *prefix, const char *code,
                        const char *what, const char *hint, const char *not_found, ckt_error *err);
/* ckt_rtc_load, then what goes into the compile cache key: "<what> <library> <major>.<minor>"
 * (-1.-1 when the library has no version entry point), into out. */
ckt_status ckt_rtc_identity(ckt_status (*load_locked)(ckt_error *), const ckt_rtc *r,
                            const char *what, char *out, size_t cap, ckt_error *err);
/* The disassembler of b's code: the command's n words (at most 3), run on a file ending in suffix
 * (".so", ".cubin", ".co"). */
void ckt_binary_set_disasm(ckt_binary *b, const char *suffix, int n, const char *const *words);
/* Compile src (kernel name) with opts: the log into b->log and, on success, the code into b->code
 * (b may be NULL: a probe). Returns the compile's result (0: success), or CKT_RTC_NO_PROGRAM when
 * the program could not be created. */
#define CKT_RTC_NO_PROGRAM (-1)
/* What a failure message shows of a compiler log: its lines that mention an error (NVRTC's
 * warnings come first and would fill the message), or the whole log when none does. */
const char *ckt_rtc_failure(const char *log, char *buf, size_t cap);
int ckt_rtc_compile(const ckt_rtc *r, const char *src, const char *name, const char *const *opts,
                    int nopts, ckt_binary *b);

ckt_status ckt_jit_write_file(const char *path, const void *data, size_t n, ckt_error *err);
ckt_status ckt_jit_read_file(const char *path, uint8_t **data, size_t *n, ckt_error *err);

#endif
