/* Streams, events, graphs and asynchronous launches through the C API (ckt/stream.h) on the cpu
 * device: launches on one stream run in order, streams are ordered by events, copies on a stream
 * are ordered with its launches, synchronous copies wait for every stream; asynchronous results
 * equal timed ones bit for bit; a kernel's run-time error comes with the next synchronization,
 * naming the launch, once; a buffer freed while work that uses it is in flight keeps its memory
 * until the work is done; another device's streams and events are refused; graphs replay their
 * launches and keep their buffers; every function refuses NULL arguments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ckt/ckt.h"
#include "runtime_internal.h" /* white box: the device's deferred frees */

#define REFUSED(call, text)                                                                        \
    do {                                                                                           \
        err.msg[0] = 0;                                                                            \
        assert_int_not_equal((call), CKT_OK);                                                      \
        if (!strstr(err.msg, (text))) fail_msg("%s: %s lacks '%s'", #call, err.msg, (text));       \
    } while (0)
#define OK(call)                                                                                   \
    do {                                                                                           \
        if ((call) != CKT_OK) fail_msg("%s: %s", #call, err.msg);                                  \
    } while (0)

#define PRELUDE                                                                                    \
    "#include <stdint.h>\n"                                                                        \
    "#include <math.h>\n"                                                                          \
    "typedef struct ckt_cpu_launch { int64_t grid[3], block[3], block_id[3]; void *lds; int "      \
    "*fault; } ckt_cpu_launch;\n"

/* y[i] = y[i] * a + c, one block of bs elements a block */
static const char *const axpb_src = PRELUDE
    "void axpb(void *const *args, const ckt_cpu_launch *l) {\n"
    "  float *y = *(float *const *)args[0]; int32_t n = *(const int32_t *)args[1];\n"
    "  float a = *(const float *)args[2], c = *(const float *)args[3];\n"
    "  int64_t bs = l->block[0], base = l->block_id[0] * bs;\n"
    "  for (int64_t t = 0; t < bs && base + t < n; t++) y[base + t] = y[base + t] * a + c;\n"
    "}\n";
/* z[i] = something that rounds (for the bit-for-bit comparison) */
static const char *const mix_src = PRELUDE
    "void mix(void *const *args, const ckt_cpu_launch *l) {\n"
    "  const float *x = *(const float *const *)args[0]; float *z = *(float *const *)args[1];\n"
    "  int32_t n = *(const int32_t *)args[2];\n"
    "  int64_t bs = l->block[0], base = l->block_id[0] * bs;\n"
    "  for (int64_t t = 0; t < bs && base + t < n; t++) { float v = x[base + t];\n"
    "    z[base + t] = expf(v) * 0.3f + sqrtf(v * v + 1.7f) / (v + 11.0f); }\n"
    "}\n";
/* a run-time fault of the cpu emulation (as a window leaving its tensor reports it) */
static const char *const fault_src =
    PRELUDE "void fault(void *const *args, const ckt_cpu_launch *l) {\n"
            "  int32_t o = *(const int32_t *)args[0];\n"
            "  if (o > 0 && l->fault) __atomic_store_n(l->fault, 1, __ATOMIC_RELAXED);\n"
            "}\n";

static const ckt_param axpb_sig[4] = {
    {CKT_PARAM_PTR, "Y"}, {CKT_PARAM_I32, "n"}, {CKT_PARAM_F32, "a"}, {CKT_PARAM_F32, "c"}};
static const ckt_param mix_sig[3] = {
    {CKT_PARAM_PTR, "X"}, {CKT_PARAM_PTR, "Z"}, {CKT_PARAM_I32, "n"}};
static const ckt_param fault_sig[1] = {{CKT_PARAM_I32, "o"}};

static ckt_binary *axpb_bin, *mix_bin, *fault_bin;

static ckt_binary *build(const char *src, const char *name)
{
    ckt_compile_request req = {"cpu", src, name, NULL, 0};
    ckt_binary *b = NULL;
    ckt_error err;
    if (ckt_compile(NULL, &req, CKT_COMPILE_NO_CACHE, &b, &err)) fail_msg("compile: %s", err.msg);
    return b;
}

static int setup(void **state)
{
    (void)state;
    axpb_bin = build(axpb_src, "axpb");
    mix_bin = build(mix_src, "mix");
    fault_bin = build(fault_src, "fault");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ckt_binary_free(axpb_bin);
    ckt_binary_free(mix_bin);
    ckt_binary_free(fault_bin);
    return 0;
}

static ckt_device *cpu(void)
{
    ckt_device *d = NULL;
    ckt_error err;
    if (ckt_device_open(NULL, "cpu", &d, &err)) fail_msg("%s", err.msg);
    return d;
}

#define BS 64
static int64_t blocks(int64_t n) { return (n + BS - 1) / BS; }

/* y = y * a + c on s (NULL: the default stream), enqueued */
static ckt_status axpb(ckt_device *dev, ckt_stream *s, ckt_buffer *y, int32_t n, float a, float c,
                       double *ms, ckt_error *err)
{
    void *ptr = ckt_buffer_ptr(y);
    void *args[4] = {&ptr, &n, &a, &c};
    ckt_launch_params p = {{blocks(n), 1, 1}, {BS, 1, 1}, 0, args, 4, axpb_sig, 4, 0};
    return ckt_launch_on(dev, axpb_bin, &p, s, ms, err);
}

static ckt_status fault(ckt_device *dev, ckt_stream *s, int32_t o, double *ms, ckt_error *err)
{
    void *args[1] = {&o};
    ckt_launch_params p = {{4, 1, 1}, {BS, 1, 1}, 0, args, 1, fault_sig, 1, 0};
    return ckt_launch_on(dev, fault_bin, &p, s, ms, err);
}

/* the steps (a, c): a a power of two, c a multiple of 1/8: y * a + c is exact before rounding, so
 * fused or not it rounds once, on the host as in the kernel */
typedef struct {
    float a, c;
} step;
static void steps(step *st, int count, uint32_t seed)
{
    static const float as[5] = {0.5f, -2.0f, 0.25f, 1.0f, -0.5f};
    for (int i = 0; i < count; i++) {
        seed = seed * 1103515245u + 12345u;
        st[i].a = as[(seed >> 4) % 5];
        st[i].c = (float)((int)((seed >> 12) % 41) - 20) / 8.0f;
    }
}
static void random_fill(float *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = 0.5f + (float)(seed >> 8) / (float)(1u << 24) * 3.5f; /* [0.5, 4): non-zero */
    }
}
static void poison(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = NAN;
}
static void reference(float *y, size_t n, const step *st, int count)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < count; k++) {
            volatile float v = y[i] * st[k].a; /* exact (a power of two) */
            y[i] = v + st[k].c;
        }
}
static void same_bits(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)))
            fail_msg("%s: element %zu is %.9g, want %.9g", what, i, (double)got[i],
                     (double)want[i]);
}

static void ordering_on_one_stream(void **state)
{
    (void)state;
    ckt_error err;
    ckt_device *dev = cpu();
    enum { N = 5000, K = 60 };
    float *x = malloc(N * sizeof *x), *out = malloc(N * sizeof *out);
    step st[K];
    steps(st, K, 3);
    random_fill(x, N, 1);
    ckt_buffer *y;
    ckt_stream *s;
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &y, &err));
    OK(ckt_stream_create(dev, &s, &err));
    assert_ptr_equal(ckt_stream_device(s), dev);
    assert_null(ckt_stream_native(s)); /* cpu: no native handle */
    OK(ckt_buffer_upload_async(y, 0, x, N * sizeof(float), s, &err));
    for (int k = 0; k < K; k++) OK(axpb(dev, s, y, N, st[k].a, st[k].c, NULL, &err));
    poison(out, N);
    OK(ckt_buffer_download_async(y, 0, out, N * sizeof(float), s, &err)); /* lands on return */
    reference(x, N, st, K);
    same_bits(out, x, N, "60 launches on one stream");
    /* on the default stream: NULL and ckt_device_stream are the same stream */
    for (int k = 0; k < K; k++)
        OK(axpb(dev, k % 2 ? NULL : ckt_device_stream(dev), y, N, st[k].a, st[k].c, NULL, &err));
    OK(ckt_stream_synchronize(ckt_device_stream(dev), &err));
    poison(out, N);
    OK(ckt_buffer_download(y, 0, out, N * sizeof(float), &err));
    reference(x, N, st, K);
    same_bits(out, x, N, "60 more on the default stream");
    OK(ckt_stream_destroy(s, &err));
    ckt_buffer_free(y);
    ckt_device_close(dev);
    free(x);
    free(out);
}

static void ordering_across_streams(void **state)
{
    (void)state;
    ckt_error err;
    ckt_device *dev = cpu();
    enum { N = 1 << 20, K = 6 };
    float *x = malloc(N * sizeof *x), *out = malloc(N * sizeof *out);
    step st[2 * K];
    steps(st, 2 * K, 9);
    random_fill(x, N, 2);
    ckt_buffer *y;
    ckt_stream *s1, *s2;
    ckt_event *e = NULL, *a = NULL, *b = NULL;
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &y, &err));
    OK(ckt_buffer_upload(y, 0, x, N * sizeof(float), &err));
    OK(ckt_stream_create(dev, &s1, &err));
    OK(ckt_stream_create(dev, &s2, &err));
    OK(ckt_stream_record(s1, &a, &err));
    for (int k = 0; k < K; k++) OK(axpb(dev, s1, y, N, st[k].a, st[k].c, NULL, &err));
    OK(ckt_stream_record(s1, &e, &err));
    OK(ckt_stream_wait(s2, e, &err)); /* s2's launches after s1's */
    for (int k = K; k < 2 * K; k++) OK(axpb(dev, s2, y, N, st[k].a, st[k].c, NULL, &err));
    OK(ckt_stream_record(s2, &b, &err));
    double ms = -1;
    OK(ckt_event_elapsed(a, b, &ms, &err)); /* events of two streams of one device */
    assert_true(ms >= 0);
    bool done = false;
    OK(ckt_event_query(b, &done, &err));
    assert_true(done);
    OK(ckt_event_synchronize(e, &err));
    /* a synchronous download waits for every stream */
    OK(axpb(dev, s1, y, N, 1.0f, 0.125f, NULL, &err));
    poison(out, N);
    OK(ckt_buffer_download(y, 0, out, N * sizeof(float), &err));
    st[2 * K - 1].c += 0.125f; /* exact: the last c is a multiple of 1/8 */
    reference(x, N, st, 2 * K);
    same_bits(out, x, N, "s2 after s1, then a synchronous download");
    ckt_event_free(a);
    ckt_event_free(b);
    ckt_event_free(e);
    OK(ckt_stream_destroy(s1, &err));
    OK(ckt_stream_destroy(s2, &err));
    ckt_buffer_free(y);
    ckt_device_close(dev);
    free(x);
    free(out);
}

static void copies_ordered_with_launches(void **state)
{
    (void)state;
    ckt_error err;
    ckt_device *dev = cpu();
    enum { N = 1 << 18, K = 3 };
    float *x1 = malloc(N * sizeof *x1), *x2 = malloc(N * sizeof *x2);
    float *mid = malloc(N * sizeof *mid), *fin = malloc(N * sizeof *fin);
    float *host = malloc(N * sizeof *host);
    step st[K];
    steps(st, K, 4);
    random_fill(x1, N, 5);
    random_fill(x2, N, 6);
    ckt_buffer *y, *z;
    ckt_stream *s;
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &y, &err));
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &z, &err));
    OK(ckt_stream_create(dev, &s, &err));
    memcpy(host, x1, N * sizeof(float));
    OK(ckt_buffer_upload_async(y, 0, host, N * sizeof(float), s, &err));
    poison(host, N); /* reusable at once: the upload was staged */
    for (int k = 0; k < K; k++) OK(axpb(dev, s, y, N, st[k].a, st[k].c, NULL, &err));
    poison(mid, N);
    OK(ckt_buffer_download_async(y, 0, mid, N * sizeof(float), s, &err));
    memcpy(host, x2, N * sizeof(float));
    OK(ckt_buffer_upload_async(y, 0, host, N * sizeof(float), s, &err));
    poison(host, N);
    for (int k = 0; k < K; k++) OK(axpb(dev, s, y, N, st[k].a, st[k].c, NULL, &err));
    OK(ckt_buffer_copy_async(z, 0, y, 0, N * sizeof(float), s, &err));
    OK(ckt_buffer_memset_async(y, 0, 0, N * sizeof(float), s, &err));
    poison(fin, N);
    OK(ckt_buffer_download_async(z, 0, fin, N * sizeof(float), s, &err));
    reference(x1, N, st, K);
    reference(x2, N, st, K);
    same_bits(mid, x1, N, "the download between the launches");
    same_bits(fin, x2, N, "the copy after the second upload's launches");
    poison(fin, N);
    OK(ckt_buffer_download(y, 0, fin, N * sizeof(float), &err));
    for (int i = 0; i < N; i++) assert_true(fin[i] == 0.0f);
    OK(ckt_stream_destroy(s, &err));
    ckt_buffer_free(y);
    ckt_buffer_free(z);
    ckt_device_close(dev);
    free(x1);
    free(x2);
    free(mid);
    free(fin);
    free(host);
}

static void async_equals_timed(void **state)
{
    (void)state;
    ckt_error err;
    ckt_device *dev = cpu();
    enum { N = 10000 };
    float *x = malloc(N * sizeof *x), *z1 = malloc(N * sizeof *z1), *z2 = malloc(N * sizeof *z2);
    random_fill(x, N, 7);
    for (int i = 0; i < N; i++) x[i] -= 2.0f;
    ckt_buffer *bx, *b1, *b2;
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &bx, &err));
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &b1, &err));
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &b2, &err));
    OK(ckt_buffer_upload(bx, 0, x, N * sizeof(float), &err));
    poison(z1, N);
    OK(ckt_buffer_upload(b1, 0, z1, N * sizeof(float), &err));
    OK(ckt_buffer_upload(b2, 0, z1, N * sizeof(float), &err));
    void *px = ckt_buffer_ptr(bx), *p1 = ckt_buffer_ptr(b1), *p2 = ckt_buffer_ptr(b2);
    int32_t n = N;
    void *a1[3] = {&px, &p1, &n}, *a2[3] = {&px, &p2, &n};
    ckt_launch_params p = {{blocks(N), 1, 1}, {BS, 1, 1}, 0, a1, 3, mix_sig, 3, 0};
    double ms = -1;
    OK(ckt_launch(dev, mix_bin, &p, &ms, &err));
    assert_true(ms >= 0);
    p.args = a2;
    ckt_stream *s;
    OK(ckt_stream_create(dev, &s, &err));
    OK(ckt_launch_async(dev, mix_bin, &p, s, &err));
    OK(ckt_stream_synchronize(s, &err));
    OK(ckt_buffer_download(b1, 0, z1, N * sizeof(float), &err));
    OK(ckt_buffer_download(b2, 0, z2, N * sizeof(float), &err));
    for (int i = 0; i < N; i++) assert_false(isnan(z1[i]));
    same_bits(z2, z1, N, "asynchronous vs timed");
    OK(ckt_stream_destroy(s, &err));
    ckt_buffer_free(bx);
    ckt_buffer_free(b1);
    ckt_buffer_free(b2);
    ckt_device_close(dev);
    free(x);
    free(z1);
    free(z2);
}

static void kernel_errors_at_the_next_synchronization(void **state)
{
    (void)state;
    ckt_error err;
    ckt_device *dev = cpu();
    ckt_stream *s;
    ckt_buffer *y;
    OK(ckt_stream_create(dev, &s, &err));
    OK(ckt_buffer_alloc(dev, BS * sizeof(float), &y, &err));
    char want[128];
    snprintf(want, sizeof want, "launch #2 of kernel 'fault' on stream %llu",
             (unsigned long long)s->id);
    /* the stream's own synchronization: the launch named, reported once */
    OK(axpb(dev, s, y, BS, 1.0f, 1.0f, NULL, &err));
    OK(fault(dev, s, 1, NULL, &err)); /* enqueued: no error yet */
    REFUSED(ckt_stream_synchronize(s, &err), want);
    assert_non_null(strstr(err.msg, "left its tensor"));
    OK(ckt_stream_synchronize(s, &err));
    /* the device's synchronization raises an error not yet reported, then is clean */
    OK(fault(dev, s, 1, NULL, &err));
    snprintf(want, sizeof want, "launch #3 of kernel 'fault' on stream %llu",
             (unsigned long long)s->id);
    REFUSED(ckt_device_synchronize(dev, &err), want);
    OK(ckt_device_synchronize(dev, &err));
    OK(ckt_stream_synchronize(s, &err));
    /* work after a failure is skipped (a sticky error) until the synchronization reports it */
    float host[BS];
    for (int i = 0; i < BS; i++) host[i] = 2.0f;
    OK(ckt_buffer_upload(y, 0, host, sizeof host, &err));
    OK(fault(dev, s, 1, NULL, &err));
    OK(axpb(dev, s, y, BS, 2.0f, 1.0f, NULL, &err));
    ckt_event *e;
    OK(ckt_stream_record(s, &e, &err));
    REFUSED(ckt_event_synchronize(e, &err), "failed");
    bool done = true;
    REFUSED(ckt_event_query(e, &done, &err), "failed");
    ckt_event_free(e);
    REFUSED(ckt_stream_synchronize(s, &err), "launch #4 of kernel 'fault'");
    OK(ckt_buffer_download(y, 0, host, sizeof host, &err));
    assert_true(host[5] == 2.0f);                    /* the launch after the fault did not run */
    OK(axpb(dev, s, y, BS, 2.0f, 1.0f, NULL, &err)); /* and the stream runs again */
    OK(ckt_buffer_download(y, 0, host, sizeof host, &err));
    assert_true(host[5] == 5.0f);
    /* a download on the stream is a synchronization of it */
    OK(fault(dev, s, 1, NULL, &err));
    REFUSED(ckt_buffer_download_async(y, 0, host, sizeof host, s, &err), "of kernel 'fault'");
    OK(ckt_stream_synchronize(s, &err));
    /* a timed launch raises at once */
    double ms;
    REFUSED(fault(dev, s, 1, &ms, &err), "of kernel 'fault'");
    OK(ckt_stream_synchronize(s, &err));
    REFUSED(fault(dev, NULL, 1, &ms, &err), "of kernel 'fault'");
    /* destroying a stream reports its pending error, and destroys it */
    OK(fault(dev, s, 1, NULL, &err));
    REFUSED(ckt_stream_destroy(s, &err), "of kernel 'fault'");
    /* argument errors are the launch's own */
    ckt_device *other = cpu();
    ckt_buffer *yo;
    OK(ckt_buffer_alloc(other, BS * sizeof(float), &yo, &err));
    REFUSED(axpb(dev, NULL, yo, BS, 1.0f, 1.0f, NULL, &err), "is not inside a live buffer");
    ckt_launch_params p = {{1, 1, 1}, {BS, 1, 1}, 0, NULL, 1, fault_sig, 1, 0};
    REFUSED(ckt_launch_async(dev, fault_bin, &p, NULL, &err), "args is NULL");
    ckt_buffer_free(yo);
    ckt_device_close(other);
    ckt_buffer_free(y);
    ckt_device_close(dev);
}

/* buffers freed while launches that use them are in flight */
static void free_while_in_flight(void **state)
{
    (void)state;
    ckt_error err;
    ckt_device *dev = cpu();
    enum { N = 1 << 20, K = 8, S = 6 };
    float *x = malloc(N * sizeof *x), *out = malloc(N * sizeof *out);
    step st[K];
    steps(st, K, 11);
    random_fill(x, N, 8);
    ckt_buffer *victim, *other, *outs[S];
    ckt_stream *s, *ss[S];
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &victim, &err));
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &other, &err));
    OK(ckt_buffer_upload(victim, 0, x, N * sizeof(float), &err));
    OK(ckt_buffer_upload(other, 0, x, N * sizeof(float), &err));
    OK(ckt_stream_create(dev, &s, &err));
    for (int k = 0; k < K; k++) {
        OK(axpb(dev, s, victim, N, st[k].a, st[k].c, NULL, &err));
        OK(axpb(dev, s, other, N, st[k].a, st[k].c, NULL, &err));
    }
    ckt_buffer_free(victim); /* in flight: its memory waits for the stream */
    pthread_mutex_lock(&dev->lock);
    bool deferred = dev->zombies != NULL;
    pthread_mutex_unlock(&dev->lock);
    assert_true(deferred);
    ckt_buffer *fresh;
    OK(ckt_buffer_alloc(dev, N * sizeof(float), &fresh, &err));
    OK(ckt_buffer_memset_async(fresh, 0, 0xff, N * sizeof(float), s, &err));
    OK(ckt_stream_synchronize(s, &err));
    pthread_mutex_lock(&dev->lock);
    deferred = dev->zombies != NULL;
    pthread_mutex_unlock(&dev->lock);
    assert_false(deferred); /* freed once the stream passed it */
    poison(out, N);
    OK(ckt_buffer_download(other, 0, out, N * sizeof(float), &err));
    float *want = malloc(N * sizeof *want);
    memcpy(want, x, N * sizeof(float));
    reference(want, N, st, K);
    same_bits(out, want, N, "the other buffer");
    OK(ckt_buffer_download(fresh, 0, out, N * sizeof(float), &err));
    for (int i = 0; i < N; i += 4099) assert_true(isnan(out[i])); /* 0xffffffff */
    /* used on more streams than a buffer remembers one by one */
    OK(ckt_buffer_upload(other, 0, x, N * sizeof(float), &err));
    for (int i = 0; i < S; i++) {
        OK(ckt_stream_create(dev, &ss[i], &err));
        OK(ckt_buffer_alloc(dev, N * sizeof(float), &outs[i], &err));
        OK(ckt_buffer_upload(outs[i], 0, x, N * sizeof(float), &err));
        for (int k = 0; k < K / 2; k++)
            OK(axpb(dev, ss[i], outs[i], N, st[k].a, st[k].c, NULL, &err));
        OK(axpb(dev, ss[i], other, N, 1.0f, 0.0f, NULL, &err));
    }
    ckt_buffer_free(other);
    OK(ckt_device_synchronize(dev, &err));
    pthread_mutex_lock(&dev->lock);
    deferred = dev->zombies != NULL;
    pthread_mutex_unlock(&dev->lock);
    assert_false(deferred); /* a device synchronization passes every stream */
    memcpy(want, x, N * sizeof(float));
    reference(want, N, st, K / 2);
    for (int i = 0; i < S; i++) {
        poison(out, N);
        OK(ckt_buffer_download(outs[i], 0, out, N * sizeof(float), &err));
        same_bits(out, want, N, "a stream's own buffer");
        OK(ckt_stream_destroy(ss[i], &err));
        ckt_buffer_free(outs[i]);
    }
    /* freed in flight, then the device closed at once: the close waits, nothing leaks */
    OK(axpb(dev, s, fresh, N, 1.0f, 1.0f, NULL, &err));
    ckt_buffer_free(fresh);
    OK(ckt_stream_destroy(s, &err));
    ckt_device_close(dev);
    free(x);
    free(out);
    free(want);
}

static void another_device_and_null_arguments(void **state)
{
    (void)state;
    ckt_error err;
    ckt_device *dev = cpu(), *other = cpu();
    ckt_stream *s, *so;
    ckt_buffer *y;
    ckt_event *e, *eo;
    OK(ckt_stream_create(dev, &s, &err));
    OK(ckt_stream_create(other, &so, &err));
    OK(ckt_buffer_alloc(dev, BS * sizeof(float), &y, &err));
    float host[BS] = {0};
    /* a stream of another device */
    REFUSED(axpb(dev, so, y, BS, 1.0f, 1.0f, NULL, &err), "the stream belongs to another device");
    REFUSED(ckt_buffer_upload_async(y, 0, host, sizeof host, so, &err),
            "upload: the stream belongs to another device");
    REFUSED(ckt_buffer_download_async(y, 0, host, sizeof host, so, &err),
            "download: the stream belongs to another device");
    REFUSED(ckt_buffer_memset_async(y, 0, 0, sizeof host, so, &err), "another device");
    REFUSED(ckt_buffer_copy_async(y, 0, y, 0, sizeof host, so, &err), "another device");
    /* events across devices */
    OK(ckt_stream_record(s, &e, &err));
    OK(ckt_stream_record(so, &eo, &err));
    double ms;
    REFUSED(ckt_event_elapsed(e, eo, &ms, &err), "different devices");
    REFUSED(ckt_stream_wait(s, eo, &err), "recorded on another device");
    OK(ckt_stream_wait(ckt_device_stream(dev), e, &err));
    /* wrapping is for GPU streams */
    ckt_stream *w = NULL;
    REFUSED(ckt_stream_wrap(dev, NULL, &w, &err), "no native streams");
    /* NULL arguments */
    assert_null(ckt_device_stream(NULL));
    assert_null(ckt_stream_device(NULL));
    assert_null(ckt_stream_native(NULL));
    assert_false(ckt_stream_capturing(NULL));
    REFUSED(ckt_stream_create(NULL, &w, &err), "device is NULL");
    REFUSED(ckt_stream_create(dev, NULL, &err), "out is NULL");
    REFUSED(ckt_stream_wrap(NULL, NULL, &w, &err), "device is NULL");
    REFUSED(ckt_stream_wrap(dev, NULL, NULL, &err), "out is NULL");
    OK(ckt_stream_destroy(NULL, &err));
    OK(ckt_stream_destroy(ckt_device_stream(dev), &err)); /* the default: a no-op */
    REFUSED(ckt_stream_synchronize(NULL, &err), "stream is NULL");
    REFUSED(ckt_stream_wait(NULL, e, &err), "stream is NULL");
    REFUSED(ckt_stream_wait(s, NULL, &err), "event is NULL");
    REFUSED(ckt_stream_record(NULL, &e, &err), "stream is NULL");
    REFUSED(ckt_stream_record(s, NULL, &err), "out is NULL");
    REFUSED(ckt_event_synchronize(NULL, &err), "event is NULL");
    bool done;
    REFUSED(ckt_event_query(NULL, &done, &err), "event is NULL");
    REFUSED(ckt_event_query(e, NULL, &err), "done is NULL");
    REFUSED(ckt_event_elapsed(NULL, e, &ms, &err), "start is NULL");
    REFUSED(ckt_event_elapsed(e, NULL, &ms, &err), "end is NULL");
    REFUSED(ckt_event_elapsed(e, e, NULL, &err), "ms is NULL");
    ckt_event_free(NULL);
    REFUSED(ckt_stream_begin_capture(NULL, &err), "stream is NULL");
    ckt_graph *g;
    REFUSED(ckt_stream_end_capture(NULL, &g, &err), "stream is NULL");
    REFUSED(ckt_stream_end_capture(s, NULL, &err), "out is NULL");
    REFUSED(ckt_stream_end_capture(s, &g, &err), "not capturing");
    REFUSED(ckt_graph_launch(NULL, s, &err), "graph is NULL");
    assert_int_equal(ckt_graph_launch_count(NULL), 0);
    ckt_graph_free(NULL);
    REFUSED(ckt_buffer_upload_async(NULL, 0, host, 4, s, &err), "destination buffer is NULL");
    REFUSED(ckt_buffer_upload_async(y, 0, NULL, 4, s, &err), "host source is NULL");
    REFUSED(ckt_buffer_download_async(NULL, 0, host, 4, s, &err), "source buffer is NULL");
    REFUSED(ckt_buffer_download_async(y, 0, NULL, 4, s, &err), "host destination is NULL");
    REFUSED(ckt_buffer_copy_async(NULL, 0, y, 0, 4, s, &err), "destination buffer is NULL");
    REFUSED(ckt_buffer_copy_async(y, 0, NULL, 0, 4, s, &err), "source buffer is NULL");
    REFUSED(ckt_buffer_memset_async(NULL, 0, 0, 4, s, &err), "destination buffer is NULL");
    REFUSED(ckt_buffer_upload_async(y, 4, host, sizeof host, s, &err), "do not fit");
    REFUSED(ckt_launch_async(NULL, fault_bin, NULL, s, &err), "device is NULL");
    REFUSED(ckt_launch_async(dev, NULL, NULL, s, &err), "binary is NULL");
    REFUSED(ckt_launch_async(dev, fault_bin, NULL, s, &err), "parameters are NULL");
    REFUSED(ckt_launch_on(NULL, fault_bin, NULL, s, &ms, &err), "device is NULL");
    REFUSED(ckt_device_synchronize(NULL, &err), "device is NULL");
    /* a NULL error is allowed everywhere */
    assert_int_not_equal(ckt_stream_synchronize(NULL, NULL), CKT_OK);
    assert_int_not_equal(ckt_stream_record(NULL, NULL, NULL), CKT_OK);
    assert_int_not_equal(ckt_event_elapsed(e, eo, &ms, NULL), CKT_OK);
    OK(ckt_stream_synchronize(s, NULL));
    ckt_event_free(e);
    ckt_event_free(eo);
    OK(ckt_stream_destroy(so, &err));
    OK(ckt_stream_destroy(s, &err));
    ckt_buffer_free(y);
    ckt_device_close(other);
    ckt_device_close(dev);
}

static void graphs(void **state)
{
    (void)state;
    ckt_error err;
    ckt_device *dev = cpu();
    enum { N = 3000, K = 7 };
    float x[N], out[N], want[N];
    step st[2 * K + K];
    steps(st, K, 13);
    for (int k = 0; k < 2 * K; k++) st[K + k] = st[k % K];
    random_fill(x, N, 9);
    ckt_buffer *y, *keep;
    ckt_stream *cap, *s;
    OK(ckt_buffer_alloc(dev, sizeof x, &y, &err));
    OK(ckt_buffer_alloc(dev, sizeof x, &keep, &err));
    OK(ckt_buffer_upload(y, 0, x, sizeof x, &err));
    OK(ckt_buffer_upload(keep, 0, x, sizeof x, &err));
    OK(ckt_stream_create(dev, &cap, &err));
    OK(ckt_stream_create(dev, &s, &err));
    REFUSED(ckt_stream_begin_capture(ckt_device_stream(dev), &err), "not the default");
    OK(ckt_stream_begin_capture(cap, &err));
    assert_true(ckt_stream_capturing(cap));
    REFUSED(ckt_stream_begin_capture(cap, &err), "already capturing");
    for (int k = 0; k < K; k++) OK(axpb(dev, cap, y, N, st[k].a, st[k].c, NULL, &err));
    OK(axpb(dev, cap, keep, N, 2.0f, 0.0f, NULL, &err));
    /* what a capture refuses on its stream */
    double ms;
    ckt_event *e;
    OK(ckt_stream_record(s, &e, &err));
    REFUSED(axpb(dev, cap, y, N, 1.0f, 0.0f, &ms, &err), "a timed launch waits");
    REFUSED(ckt_stream_synchronize(cap, &err), "synchronize: the stream is capturing");
    REFUSED(ckt_stream_record(cap, &e, &err), "record: the stream is capturing");
    REFUSED(ckt_stream_wait(cap, e, &err), "wait: the stream is capturing");
    REFUSED(ckt_buffer_upload_async(y, 0, x, sizeof x, cap, &err),
            "upload: the stream is capturing");
    REFUSED(ckt_buffer_download_async(y, 0, out, sizeof out, cap, &err),
            "download: the stream is capturing");
    REFUSED(ckt_buffer_memset_async(y, 0, 0, sizeof out, cap, &err), "the stream is capturing");
    OK(ckt_device_synchronize(dev, &err)); /* the device's other streams: fine */
    ckt_graph *g;
    OK(ckt_stream_end_capture(cap, &g, &err));
    assert_false(ckt_stream_capturing(cap));
    assert_int_equal(ckt_graph_launch_count(g), K + 1);
    OK(ckt_buffer_download(y, 0, out, sizeof out, &err));
    same_bits(out, x, N, "capturing runs nothing");
    ckt_buffer_free(keep); /* the graph keeps it */
    REFUSED(ckt_stream_wait(cap, NULL, &err), "event is NULL");
    OK(ckt_graph_launch(g, NULL, &err));
    ckt_event *after;
    OK(ckt_stream_record(ckt_device_stream(dev), &after, &err));
    OK(ckt_stream_wait(s, after, &err)); /* the second replay after the first */
    ckt_event_free(after);
    OK(ckt_graph_launch(g, s, &err));
    OK(ckt_device_synchronize(dev, &err));
    memcpy(want, x, sizeof x);
    reference(want, N, st, 2 * K);
    OK(ckt_buffer_download(y, 0, out, sizeof out, &err));
    same_bits(out, want, N, "two replays");
    /* the graph's launches in a capture: refused, then the capture goes on */
    ckt_device *other = cpu();
    ckt_stream *so;
    OK(ckt_stream_create(other, &so, &err));
    REFUSED(ckt_graph_launch(g, so, &err), "another device");
    OK(ckt_stream_begin_capture(cap, &err));
    REFUSED(ckt_graph_launch(g, cap, &err), "capturing");
    /* destroying a capturing stream drops its capture */
    OK(ckt_stream_destroy(cap, &err));
    /* a graph's replay of a kernel that faults: named at the synchronization */
    OK(ckt_stream_begin_capture(so, &err));
    OK(fault(other, so, 1, NULL, &err));
    ckt_graph *gf;
    OK(ckt_stream_end_capture(so, &gf, &err));
    OK(ckt_graph_launch(gf, NULL, &err));
    REFUSED(ckt_device_synchronize(other, &err), "of kernel 'fault'");
    ckt_graph_free(gf);
    OK(ckt_stream_destroy(so, &err));
    ckt_device_close(other);
    /* the graph outlives its kept buffer's owner and frees it last (valgrind / ASan) */
    OK(ckt_graph_launch(g, s, &err));
    ckt_graph_free(g); /* while its replay may still run */
    OK(ckt_stream_synchronize(s, &err));
    ckt_event_free(e);
    OK(ckt_stream_destroy(s, &err));
    ckt_buffer_free(y);
    ckt_device_close(dev);
}

/* Y[i] = X[i] * 2 over n values (n a multiple of 4), 32 threads a block: an executable */
static ckt_kernel *doubler(void)
{
    ckt_error err;
    ckt_kernel *k;
    int x, y, n, gx, gy, wx, wy, r, o;
    OK(ckt_kernel_create("doubler", 32, &k, &err));
    ckt_expr_pool *ex = ckt_kernel_exprs(k);
    OK(ckt_kernel_param_ptr(k, "X", CKT_F32, true, 16, &x, &err));
    OK(ckt_kernel_param_ptr(k, "Y", CKT_F32, false, 16, &y, &err));
    OK(ckt_kernel_param_scalar(k, "n", CKT_PARAM_I32, false, 0, 0, 4, &n, &err));
    ckt_expr_id shape[1] = {ckt_kernel_param(k, n)->expr}, stride[1] = {ckt_expr_int(ex, 1)};
    OK(ckt_kernel_global(k, x, CKT_F32, 1, shape, stride, true, &gx, &err));
    OK(ckt_kernel_global(k, y, CKT_F32, 1, shape, stride, true, &gy, &err));
    const int64_t len[1] = {128};
    ckt_expr_id origin[1] = {ckt_expr_mulc(ex, ckt_expr_bid(ex, 0), 128)};
    OK(ckt_kernel_window_make(k, gx, 1, len, origin, &wx, &err));
    OK(ckt_kernel_window_make(k, gy, 1, len, origin, &wy, &err));
    ckt_dist d;
    int di;
    OK(ckt_dist_default_copy(1, len, 4, 32, &d, &err));
    OK(ckt_kernel_add_dist(k, &d, &di, &err));
    OK(ckt_kernel_load(k, wx, di, -1, 0, 0.0f, &r, &err));
    OK(ckt_kernel_map(k, 1, &r, ckt_expr_mulc(ex, ckt_expr_input(ex, 0), 2), CKT_F32, &o, &err));
    OK(ckt_kernel_store(k, wy, o, -1, 0, &err));
    OK(ckt_kernel_finish(k, &err));
    return k;
}

static void executable_launch_async(void **state)
{
    (void)state;
    ckt_error err;
    ckt_kernel *k = doubler();
    ckt_executable *e;
    ckt_kernel_compile_options o = {CKT_COMPILE_NO_CACHE, NULL, 0};
    OK(ckt_kernel_compile(NULL, k, "cpu", &o, &e, &err));
    ckt_device *dev = cpu(), *other = cpu();
    enum { N = 4096, R = 5 };
    float x[N], out[N];
    random_fill(x, N, 10);
    ckt_buffer *bx, *by, *bz;
    ckt_stream *s, *so;
    OK(ckt_buffer_alloc(dev, sizeof x, &bx, &err));
    OK(ckt_buffer_alloc(dev, sizeof x, &by, &err));
    OK(ckt_buffer_alloc(dev, sizeof x, &bz, &err));
    OK(ckt_buffer_upload(bx, 0, x, sizeof x, &err));
    OK(ckt_stream_create(dev, &s, &err));
    OK(ckt_stream_create(other, &so, &err));
    const int64_t grid[3] = {N / 128, 1, 1};
    /* X -> Y -> X ... R times on s, each reading the last one's output */
    for (int r = 0; r < R; r++) {
        ckt_arg args[3] = {ckt_arg_buffer(r % 2 ? by : bx), ckt_arg_buffer(r % 2 ? bx : by),
                           ckt_arg_i32(N)};
        OK(ckt_exe_launch_async(e, s, NULL, grid, args, 3, &err));
    }
    OK(ckt_stream_synchronize(s, &err));
    poison(out, N);
    OK(ckt_buffer_download(by, 0, out, sizeof out, &err)); /* R odd: the last wrote Y */
    for (int i = 0; i < N; i++) assert_true(out[i] == x[i] * 32.0f);
    /* with no stream: the device's default, or the first buffer's device */
    ckt_arg args[3] = {ckt_arg_buffer(bx), ckt_arg_buffer(bz), ckt_arg_i32(N)};
    OK(ckt_exe_launch_async(e, NULL, NULL, grid, args, 3, &err));
    OK(ckt_device_synchronize(dev, &err));
    double ms = -1;
    OK(ckt_exe_launch_on(e, s, NULL, grid, args, 3, 0, &ms, &err));
    assert_true(ms >= 0);
    /* refusals */
    REFUSED(ckt_exe_launch_async(e, so, NULL, grid, args, 3, &err), "buffer of another device");
    REFUSED(ckt_exe_launch_async(e, s, other, grid, args, 3, &err),
            "the stream belongs to another device");
    REFUSED(ckt_exe_launch_async(NULL, s, NULL, grid, args, 3, &err), "executable is NULL");
    REFUSED(ckt_exe_launch_async(e, s, NULL, NULL, args, 3, &err), "grid is NULL");
    REFUSED(ckt_exe_launch_async(e, s, NULL, grid, NULL, 3, &err), "args is NULL");
    REFUSED(ckt_exe_launch_async(e, s, NULL, grid, args, 2, &err), "takes 3 arguments");
    /* a graph keeps Z; once its owner freed it, Z is no longer a launch argument */
    OK(ckt_stream_begin_capture(s, &err));
    OK(ckt_exe_launch_async(e, s, NULL, grid, args, 3, &err));
    REFUSED(ckt_exe_launch_on(e, s, NULL, grid, args, 3, 0, &ms, &err), "a timed launch waits");
    ckt_graph *g;
    OK(ckt_stream_end_capture(s, &g, &err));
    ckt_buffer_free(bz);
    REFUSED(ckt_exe_launch_async(e, s, NULL, grid, args, 3, &err), "'Y' is a freed buffer");
    OK(ckt_graph_launch(g, s, &err));
    ckt_graph_free(g);
    OK(ckt_stream_destroy(s, &err));
    OK(ckt_stream_destroy(so, &err));
    ckt_buffer_free(bx);
    ckt_buffer_free(by);
    ckt_device_close(dev);
    ckt_device_close(other);
    ckt_exe_free(e);
    ckt_kernel_destroy(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ordering_on_one_stream),
        cmocka_unit_test(ordering_across_streams),
        cmocka_unit_test(copies_ordered_with_launches),
        cmocka_unit_test(async_equals_timed),
        cmocka_unit_test(kernel_errors_at_the_next_synchronization),
        cmocka_unit_test(free_while_in_flight),
        cmocka_unit_test(another_device_and_null_arguments),
        cmocka_unit_test(graphs),
        cmocka_unit_test(executable_launch_async),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
