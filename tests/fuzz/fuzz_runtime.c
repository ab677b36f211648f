/* The CPU runtime's checks from arbitrary bytes: buffer transfers with fuzzed offsets and lengths
 * (upload, download, copy, memset), and launches with fuzzed grids, blocks, LDS sizes, argument
 * lists and signatures. Outcomes: CKT_OK (and then the bytes moved are the ones asked for) or an
 * error with a message; never an access outside a buffer (ASan) or a crash. Launches that pass the
 * checks run an empty kernel; ones that would run more than 2^16 threads are given one argument
 * too many, so the dimension checks still see huge values but nothing runs for minutes. */
#include <stdlib.h>
#include <string.h>

#include "ckt/jit.h"
#include "ckt/runtime.h"
#include "fuzz_common.h"

static ckt_device *dev;
static ckt_binary *bin;

static void teardown(void)
{
    ckt_binary_free(bin);
    ckt_device_close(dev); /* joins the worker threads: valgrind sees no leak */
}

static void setup(void)
{
    ckt_error err;
    if (dev) return;
    if (ckt_device_open(NULL, "cpu", &dev, &err) != CKT_OK) abort();
    ckt_compile_request req = {
        "cpu",
        "typedef struct ckt_cpu_launch ckt_cpu_launch;\n"
        "void k(void *const *args, const ckt_cpu_launch *l) { (void)args; (void)l; }\n",
        "k", NULL, 0};
    if (ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &bin, &err) != CKT_OK) abort();
    atexit(teardown);
}

/* offsets and lengths near the buffer's edges, sometimes wild */
static size_t fz_size(fuzz_input *in, size_t buf_size)
{
    uint8_t k = fz_u8(in);
    switch (k & 3) {
    case 0: return buf_size - (k >> 2) % 8;
    case 1: return (size_t)fz_int(in);
    default: return k >> 2;
    }
}

/* launch dimensions: mostly valid (an exhausted input gives 1), sometimes anything */
static int64_t fz_dim(fuzz_input *in)
{
    uint8_t k = fz_u8(in);
    return k < 224 ? 1 + k % 32 : fz_int(in);
}

static void check_status(ckt_status st, const ckt_error *err)
{
    if (st != CKT_OK) FUZZ_CHECK(err->msg[0] != 0);
}

static void transfers(fuzz_input *in, ckt_buffer *a, ckt_buffer *b)
{
    uint8_t host[256], back[256];
    ckt_error err;
    for (int step = 0; step < 8 && in->n; step++) {
        ckt_buffer *x = (fz_u8(in) & 1) ? a : b, *y = (fz_u8(in) & 1) ? a : b;
        size_t off = fz_size(in, ckt_buffer_size(x)), off2 = fz_size(in, ckt_buffer_size(y)),
               len = fz_size(in, sizeof host);
        size_t host_len = len <= sizeof host
                              ? len
                              : sizeof host; /* the host side is never the thing under test */
        memset(host, fz_u8(in), sizeof host);
        err.msg[0] = 0;
        ckt_status st;
        switch (fz_u8(in) % 4) {
        case 0:
            st = ckt_buffer_upload(x, off, host, host_len, &err);
            check_status(st, &err);
            if (st == CKT_OK && host_len) {
                FUZZ_CHECK(ckt_buffer_download(x, off, back, host_len, &err) == CKT_OK);
                FUZZ_CHECK(memcmp(host, back, host_len) == 0);
            }
            break;
        case 1: check_status(ckt_buffer_download(x, off, back, host_len, &err), &err); break;
        case 2: check_status(ckt_buffer_copy(x, off, y, off2, len, &err), &err); break;
        default: check_status(ckt_buffer_memset(x, off, host[0], len, &err), &err); break;
        }
    }
}

static void launch(fuzz_input *in, ckt_buffer *a)
{
    ckt_launch_params p;
    memset(&p, 0, sizeof p);
    int64_t volume = 1;
    for (int i = 0; i < 3; i++) {
        p.grid[i] = fz_dim(in);
        p.block[i] = fz_dim(in);
        int64_t g = p.grid[i] > 0 ? p.grid[i] : 1, b = p.block[i] > 0 ? p.block[i] : 1;
        volume =
            (g > (1 << 20) || b > (1 << 20) || volume > (1 << 20)) ? INT64_MAX / 4 : volume * g * b;
    }
    p.dyn_shared_bytes = fz_int(in) & 1 ? fz_int(in) : 0;
    enum { MAXARGS = 6 };
    ckt_param sig[MAXARGS + 1];
    void *values[MAXARGS + 1];
    uint64_t storage[MAXARGS + 1];
    int n = fz_u8(in) % (MAXARGS + 1);
    for (int i = 0; i < n; i++) {
        uint8_t k = fz_u8(in);
        sig[i].kind = (ckt_param_kind)(k % 6); /* 4, a tensor map, is refused; 5 is not a kind */
        sig[i].name = "p";
        /* integer arithmetic: a pointer past the buffer is the point, not a harness bug */
        uintptr_t addr = (uintptr_t)ckt_buffer_ptr(a);
        switch (fz_u8(in) % 4) {
        case 0: addr += fz_size(in, ckt_buffer_size(a)); break; /* inside, at the edge or past it */
        case 1: addr = 0; break;
        case 2: addr = (uintptr_t)storage; break; /* host memory, not a device buffer */
        default: break;
        }
        void *ptr = (void *)addr;
        if (sig[i].kind == CKT_PARAM_PTR)
            memcpy(&storage[i], &ptr, sizeof ptr);
        else
            storage[i] = (uint64_t)fz_int(in);
        values[i] = (fz_u8(in) % 16) ? (void *)&storage[i] : NULL;
    }
    p.args = values;
    p.signature = sig;
    p.signature_count = n;
    p.arg_count = n + (volume > (1 << 16) ? 1 : 0);
    if (fz_u8(in) % 32 == 31) p.arg_count = -1 - (int)fz_u8(in);
    ckt_error err;
    err.msg[0] = 0;
    double ms;
    ckt_status st = ckt_launch(dev, bin, &p, &ms, &err);
    check_status(st, &err);
    if (st == CKT_OK) FUZZ_CHECK(volume <= (1 << 16) && ms >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    fuzz_input in = {data, size};
    ckt_error err;
    ckt_buffer *a = NULL, *b = NULL;
    size_t sa = 1 + fz_u8(&in) % 200, sb = 1 + fz_u8(&in) % 200;
    if (ckt_buffer_alloc(dev, sa, &a, &err) != CKT_OK ||
        ckt_buffer_alloc(dev, sb, &b, &err) != CKT_OK)
        abort();
    /* a zero-byte or absurd allocation is refused with a message */
    ckt_buffer *c = NULL;
    size_t huge = (fz_u8(&in) & 1) ? 0 : SIZE_MAX - fz_u8(&in);
    FUZZ_CHECK(ckt_buffer_alloc(dev, huge, &c, &err) != CKT_OK && err.msg[0] != 0);
    transfers(&in, a, b);
    launch(&in, a);
    ckt_buffer_free(a);
    ckt_buffer_free(b);
    return 0;
}
