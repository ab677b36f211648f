/* What a sandboxed compile may ask of a compiler (CKT_COMPILE_SANDBOXED). Compilers are
 * programs with the host user's rights: a driver option can run another program (-wrapper,
 * -B, -fplugin, -specs), read a file into the output (@file, -include) or write one (-o, -MF),
 * and the preprocessor reads any file an #include names. So a sandboxed compile takes options
 * only from a closed list of optimisation switches, and a source whose preprocessor lines are
 * the ones the emitter writes: conditionals, macro definitions, "#pragma unroll [n]" and the
 * C prelude's system headers. The emitter never puts a script's string into the source except as a
 * C identifier, so generated kernels pass; this check is the second wall. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jit_internal.h"

static bool listed(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return true;
    return false;
}

static const char *const cpu_options[] = {"-O0", "-O1", "-O2", "-O3", "-Os", NULL};
static const char *const hip_options[] = {"-O0", "-O1", "-O2", "-O3", "-ffast-math", NULL};
static const char *const cuda_options[] = {"-lineinfo", "--use_fast_math", "-use_fast_math", NULL};

static ckt_status check_options(const ckt_compile_request *req, const ckt_target_record *target,
                                ckt_error *err)
{
    const char *t = target->name;
    ckt_compiler_kind compiler = target->compiler;
    const char *const *ok = compiler == CKT_COMPILER_HOST_CC ? cpu_options
                            : compiler == CKT_COMPILER_NVRTC ? cuda_options
                                                             : hip_options;
    for (int i = 0; i < req->noptions; i++)
        if (!listed(req->options[i], ok)) {
            char known[160] = "";
            for (const char *const *p = ok; *p; p++) {
                strncat(known, *p, sizeof known - strlen(known) - 1);
                if (p[1]) strncat(known, " ", sizeof known - strlen(known) - 1);
            }
            return ckt_fail(
                err, CKT_EINVAL,
                "compile: option '%.64s' is not allowed in a sandboxed state (for %s only: %s)",
                req->options[i], t, known);
        }
    return CKT_OK;
}

/* The directive of a preprocessor line ("include <math.h>"), spliced lines already joined. */
static bool directive_allowed(const char *d, size_t n)
{
    static const char *const plain[] = {"define", "undef", "ifdef", "ifndef", "if",
                                        "elif",   "else",  "endif", NULL};
    static const char *const headers[] = {"<math.h>", "<stdint.h>", "<string.h>", "<stdlib.h>",
                                          NULL};
    size_t w = strspn(d, "abcdefghijklmnopqrstuvwxyz_");
    if (w > n) w = n;
    char word[16] = "";
    if (w >= sizeof word) return false;
    memcpy(word, d, w);
    if (listed(word, plain)) return true;
    const char *h = d + w;
    if (!strcmp(word, "pragma")) { /* only the emitter's loop hints: "#pragma unroll [n]" */
        while (h < d + n && (*h == ' ' || *h == '\t')) h++;
        if ((size_t)(d + n - h) < 6 || strncmp(h, "unroll", 6)) return false;
        for (h += 6; h < d + n; h++)
            if (!strchr(" \t\r0123456789", *h)) return false;
        return true;
    }
    if (strcmp(word, "include") != 0) return false;
    while (h < d + n && (*h == ' ' || *h == '\t')) h++;
    size_t hn = (size_t)(d + n - h);
    while (hn && (h[hn - 1] == ' ' || h[hn - 1] == '\t' || h[hn - 1] == '\r')) hn--;
    for (const char *const *p = headers; *p; p++)
        if (strlen(*p) == hn && !strncmp(h, *p, hn)) return true;
    return false;
}

static ckt_status check_source(const char *src, ckt_error *err)
{
    /* trigraph and digraph spellings of '#', and the operators that act like directives */
    static const char *const banned[] = {"?"
                                         "?=",
                                         "%:",
                                         "_Pragma",
                                         "__has_include",
                                         "__has_embed",
                                         NULL};
    for (const char *const *b = banned; *b; b++)
        if (strstr(src, *b))
            return ckt_fail(
                err, CKT_EINVAL,
                "compile: the source uses '%s', which a sandboxed compile does not allow", *b);
    size_t n = strlen(src);
    char *joined = malloc(n + 1);
    if (!joined) return ckt_fail(err, CKT_ENOMEM, "compile: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == '\\' && (src[i + 1] == '\n' || (src[i + 1] == '\r' && src[i + 2] == '\n'))) {
            i += src[i + 1] == '\r' ? 2 : 1;
            continue;
        }
        joined[k++] = src[i];
    }
    joined[k] = 0;
    ckt_status st = CKT_OK;
    for (const char *line = joined; *line && !st;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *p = line;
        while (p < line + len && (*p == ' ' || *p == '\t')) p++;
        if (p < line + len && *p == '#') {
            p++;
            while (p < line + len && (*p == ' ' || *p == '\t')) p++;
            if (!directive_allowed(p, (size_t)(line + len - p)))
                st = ckt_fail(
                    err, CKT_EINVAL,
                    "compile: the preprocessor line '%.80s' is not allowed in a sandboxed state",
                    line);
        }
        line = end ? end + 1 : line + len;
    }
    free(joined);
    return st;
}

ckt_status ckt_jit_check_sandboxed(const ckt_compile_request *req, const ckt_target_record *t,
                                   ckt_error *err)
{
    ckt_status st = check_options(req, t, err);
    return st ? st : check_source(req->source, err);
}
