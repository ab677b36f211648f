/* Shared by the JIT backends (not installed). */
#ifndef CKT_JIT_INTERNAL_H
#define CKT_JIT_INTERNAL_H

#include "ckt/jit.h"
#include "ckt/target.h"

struct ckt_binary {
    char target[32];
    char compiler[192];
    uint8_t *code;
    size_t code_size;
    ckt_resources res;
    char *log;
    char *disasm;
    int disasm_done;        /* disassembly runs on first request, not in the compile path */
    char disasm_cmd[3][64]; /* the disassembler and its options; empty: none */
    const char *disasm_suffix;
    char disasm_note[320]; /* why there is no disassembly */
    double ms;
    char kernel_name[128];
    int from_cache, compile_only;
    uint64_t id;      /* unique per process: runtimes key their loaded modules on it */
    _Atomic int refs; /* ckt_binary_retain / ckt_binary_free */
};

ckt_binary *ckt_binary_new(const char *target);
uint64_t ckt_binary_id(const ckt_binary *b);
double ckt_jit_now_ms(void);
int ckt_jit_run(char *const argv[], const char *stdin_file, char **out);
void ckt_jit_disassemble(ckt_binary *b, const char *const *argv_prefix, int nprefix,
                         const char *suffix);
/* t: the request's target, parsed (its architecture is what they compile for) */
ckt_status ckt_jit_hip(const ckt_compile_request *req, const ckt_target_record *t, ckt_binary *b,
                       ckt_error *err);
ckt_status ckt_jit_cuda(const ckt_compile_request *req, const ckt_target_record *t, ckt_binary *b,
                        ckt_error *err);
ckt_status ckt_jit_cpu(const ckt_compile_request *req, ckt_binary *b, ckt_error *err);
/* the compiler's name and version, for the cache key (loads the library on first use) */
ckt_status ckt_jit_hip_identity(char *out, size_t cap, ckt_error *err);
ckt_status ckt_jit_cuda_identity(char *out, size_t cap, ckt_error *err);
ckt_status ckt_jit_cpu_identity(char *out, size_t cap, ckt_error *err);
/* CKT_COMPILE_SANDBOXED: the options and the source's preprocessor lines (jit_sandbox.c) */
ckt_status ckt_jit_check_sandboxed(const ckt_compile_request *req, ckt_compiler_kind compiler,
                                   ckt_error *err);
ckt_status ckt_jit_write_file(const char *path, const void *data, size_t n, ckt_error *err);
ckt_status ckt_jit_read_file(const char *path, uint8_t **data, size_t *n, ckt_error *err);

#endif
