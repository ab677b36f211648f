/* Compile test for one GPU target (argv[1]: gfx90a or sm_90): a small kernel that stages a
 * tile through shared memory must give a real code object (ELF, machine AMDGPU / CUDA),
 * nonzero registers and the LDS bytes it declares; a second compile of the same source comes
 * from the cache. Exit 77 (ctest SKIP_RETURN_CODE) with "SKIPPED: ..." when the compiler
 * library is absent. Also checks the refusals that must not crash the compiler. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckt/cache.h"
#include "ckt/jit.h"
#include "check.h"

#define SKIP 77

static const char *const src =
    "extern \"C\" __global__ void __launch_bounds__(256) stage(const float4* __restrict__ in, float4* __restrict__ out, int n) {\n"
    "  __shared__ float4 tile[256];\n"
    "  int i = blockIdx.x * 256 + threadIdx.x;\n"
    "  if (i < n) tile[threadIdx.x] = in[i];\n"
    "  __syncthreads();\n"
    "  if (i < n) out[i] = tile[255 - threadIdx.x];\n"
    "}\n";


int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: compile_check <gfx90a|sm_90> <cache dir>\n"); return 2; }
    const char *target = argv[1];
    int amd = !strncmp(target, "gfx", 3);
    ckt_context_options o = {argv[2], 0, NULL};
    ckt_context *ctx;
    ckt_error err;
    if (ckt_context_create(&o, &ctx, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    ckt_compile_request req = {target, src, "stage", NULL, 0};
    ckt_binary *b;
    ckt_status st = ckt_compile(ctx, &req, CKT_COMPILE_ONLY | CKT_COMPILE_NO_CACHE, &b, &err);
    if (st == CKT_ERUNTIME && strstr(err.msg, "not found")) {
        printf("SKIPPED: %s compile test: %s\n", target, err.msg);
        ckt_context_destroy(ctx);
        return SKIP;
    }
    if (st) { fprintf(stderr, "FAIL: compile for %s: %s\n", target, err.msg); return 1; }
    size_t n;
    const uint8_t *code = ckt_binary_code(b, &n);
    CHECK(n > 64 && !memcmp(code, "\x7f" "ELF", 4), "not an ELF file (%zu bytes)", n);
    unsigned machine = n > 20 ? (unsigned)(code[18] | code[19] << 8) : 0;
    CHECK(machine == (amd ? 224u : 190u), "ELF machine %u, want %u (%s)", machine, amd ? 224u : 190u, amd ? "EM_AMDGPU" : "EM_CUDA");
    const ckt_resources *r = ckt_binary_resources(b);
    if (amd) {
        CHECK(r->vgprs > 0, "vgprs %lld", (long long)r->vgprs);
        CHECK(r->sgprs > 0, "sgprs %lld", (long long)r->sgprs);
        CHECK(r->vgpr_spills == 0 && r->sgpr_spills == 0, "spills %lld/%lld", (long long)r->vgpr_spills, (long long)r->sgpr_spills);
    } else {
        CHECK(r->registers > 0, "registers %lld", (long long)r->registers);
        CHECK(r->spill_stores == 0, "spill stores %lld", (long long)r->spill_stores);
    }
    CHECK(r->shared_bytes == 4096, "LDS bytes %lld, want 4096", (long long)r->shared_bytes);
    CHECK(r->scratch_bytes == 0, "scratch %lld", (long long)r->scratch_bytes);
    printf("%s: %zu bytes by %s in %.1f ms; vgprs %lld sgprs %lld registers %lld lds %lld\n", target, n, ckt_binary_compiler(b),
           ckt_binary_compile_ms(b), (long long)r->vgprs, (long long)r->sgprs, (long long)r->registers, (long long)r->shared_bytes);
    const char *dis = ckt_binary_disassembly(b);
    if (dis) {
        CHECK(strstr(dis, amd ? "ds_write_b128" : "STS.128") != NULL, "disassembly lacks the 128-bit LDS store");
        CHECK(strstr(dis, amd ? "ds_read_b128" : "LDS.128") != NULL, "disassembly lacks the 128-bit LDS load");
    } else {
        printf("SKIPPED: disassembly check: %s\n", ckt_binary_disassembly_note(b));
    }
    ckt_binary_free(b);

    /* through the cache: a miss, then a hit with the same bytes */
    ckt_binary *c1, *c2;
    char salted[4096];
    snprintf(salted, sizeof salted, "// compile_check %s\n%s", target, src);
    ckt_compile_request req2 = {target, salted, "stage", NULL, 0};
    if (ckt_compile(ctx, &req2, 0, &c1, &err) || ckt_compile(ctx, &req2, 0, &c2, &err)) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    size_t n1, n2;
    const uint8_t *b1 = ckt_binary_code(c1, &n1), *b2 = ckt_binary_code(c2, &n2);
    CHECK(ckt_binary_from_cache(c2), "second compile did not hit the cache (%s)", ckt_cache_note(ckt_context_cache(ctx)));
    CHECK(n1 == n2 && !memcmp(b1, b2, n1), "cached code differs");
    CHECK(ckt_binary_resources(c2)->shared_bytes == 4096, "cached resources differ");
    printf("%s: cache hit in %.3f ms\n", target, ckt_binary_compile_ms(c2));
    ckt_binary_free(c1);
    ckt_binary_free(c2);

    /* refusals: a compile error carries the compiler's log; unknown architectures never crash */
    ckt_compile_request bad = {target, "this is not C++ {", "stage", NULL, 0};
    st = ckt_compile(ctx, &bad, CKT_COMPILE_NO_CACHE, &b, &err);
    CHECK(st == CKT_ECOMPILE, "a syntax error gave status %d: %s", st, err.msg);
    CHECK(strstr(err.msg, "error") != NULL, "no compiler log in: %s", err.msg);
    const char *refused[] = {amd ? "gfx942" : "sm_75", amd ? "gfx1100" : "sm_9999", amd ? "gfx9999" : "sm_", NULL};
    for (const char *const *t = refused; *t; t++) {
        ckt_compile_request rq = {*t, src, "stage", NULL, 0};
        st = ckt_compile(ctx, &rq, CKT_COMPILE_NO_CACHE, &b, &err);
        if (st == CKT_OK) { /* a newer compiler may know it: then it must be a real code object */
            ckt_binary_code(b, &n);
            CHECK(n > 64, "%s: empty code object", *t);
            printf("%s: this compiler supports %s\n", target, *t);
            ckt_binary_free(b);
            continue;
        }
        CHECK(st == CKT_EUNSUPPORTED || st == CKT_EINVAL, "%s gave status %d: %s", *t, st, err.msg);
        CHECK(strstr(err.msg, *t) != NULL, "the refusal does not name %s: %s", *t, err.msg);
        printf("%s: refused %s: %s\n", target, *t, err.msg);
    }
    ckt_context_destroy(ctx);
    if (failures) { fprintf(stderr, "%d check(s) failed\n", failures); return 1; }
    printf("PASS: %s compile test\n", target);
    return 0;
}
