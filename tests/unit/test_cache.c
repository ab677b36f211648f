/* The compile cache: SHA-256 test vectors, keys, hits and misses, damaged entries (flipped
 * bytes, truncation, another format version, garbage) detected and rebuilt, unusable
 * directories degrading to no caching, two processes at once, kill -9 in mid-write; what a
 * compile says it did (ckt_binary_cache_status) and the install's read-only cache. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include <cmocka.h>

#include "ckt/cache.h"
#include "ckt/jit.h"

static char root[256];

static void make_root(void)
{
    if (root[0]) return;
    snprintf(root, sizeof root, "/tmp/ckt-test-cache-XXXXXX");
    if (!mkdtemp(root)) fail_msg("mkdtemp");
}

static void fresh_dir(const char *name, char *out, size_t cap)
{
    make_root();
    snprintf(out, cap, "%s/%s", root, name);
    mkdir(out, 0755);
}

static void sha256_vectors(void **state)
{
    (void)state;
    char hex[65];
    ckt_sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ckt_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ckt_sha256_hex(m, strlen(m), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    ckt_sha256_hex(a, 1000000, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* property: any split into updates gives the one-shot digest */
    uint64_t r = 7;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = (size_t)(trial * 37 % 3000);
        ckt_sha256 s;
        uint8_t d1[32], d2[32];
        ckt_sha256_init(&s);
        ckt_sha256_update(&s, a, n);
        ckt_sha256_final(&s, d1);
        ckt_sha256_init(&s);
        for (size_t off = 0; off < n;) {
            r = r * 6364136223846793005u + 1;
            size_t take = (size_t)(r >> 33) % 130;
            if (take > n - off) take = n - off;
            ckt_sha256_update(&s, a + off, take);
            off += take;
        }
        ckt_sha256_final(&s, d2);
        assert_memory_equal(d1, d2, 32);
    }
    free(a);
}

static void keys_are_length_prefixed(void **state)
{
    (void)state;
    char k1[65], k2[65], k3[65];
    const char *p1[] = {"ab", "c"}, *p2[] = {"a", "bc"}, *p3[] = {"ab", "c"};
    ckt_cache_key(p1, NULL, 2, k1);
    ckt_cache_key(p2, NULL, 2, k2);
    ckt_cache_key(p3, NULL, 2, k3);
    assert_string_not_equal(k1, k2);
    assert_string_equal(k1, k3);
    assert_int_equal(strlen(k1), 64);
}

static void put_get_and_damage(void **state)
{
    (void)state;
    char dir[512], key[65], path[4200];
    fresh_dir("entries", dir, sizeof dir);
    ckt_cache *c;
    assert_int_equal(ckt_cache_open(dir, &c, NULL), CKT_OK);
    assert_true(ckt_cache_enabled(c));
    assert_string_equal(ckt_cache_note(c), "");
    const char *parts[] = {"payload"};
    ckt_cache_key(parts, NULL, 1, key);
    uint8_t *data;
    size_t n;
    assert_int_equal(ckt_cache_get(c, key, &data, &n), 0); /* miss */
    const char payload[] = "the code object bytes \x00\x01\x02 and more";
    /* each kind of damage: detected, removed, rebuilt */
    for (int damage = 0; damage < 7; damage++) {
        assert_int_equal(ckt_cache_put(c, key, payload, sizeof payload), 1);
        assert_int_equal(ckt_cache_get(c, key, &data, &n), 1);
        assert_int_equal(n, sizeof payload);
        assert_memory_equal(data, payload, n);
        free(data);
        ckt_cache_entry_path(c, key, path, sizeof path);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        int fd = open(path, O_RDWR);
        assert_true(fd >= 0);
        unsigned char byte;
        switch (damage) {
        case 0:
            assert_true(pread(fd, &byte, 1, 130) >= 0);
            byte ^= 0x10;
            assert_true(pwrite(fd, &byte, 1, 130) >= 0);
            break; /* payload bit flip */
        case 1:
            assert_true(pread(fd, &byte, 1, 100) >= 0);
            byte ^= 0xff;
            assert_true(pwrite(fd, &byte, 1, 100) >= 0);
            break; /* checksum */
        case 2:
            byte = 9;
            assert_true(pwrite(fd, &byte, 1, 8) >= 0);
            break;                                                      /* format version */
        case 3: assert_true(ftruncate(fd, st.st_size - 5) >= 0); break; /* truncated payload */
        case 4: assert_true(ftruncate(fd, 50) >= 0); break;             /* truncated header */
        case 5:
            assert_true(ftruncate(fd, 0) >= 0);
            assert_true(pwrite(fd, "garbage garbage garbage", 23, 0) >= 0);
            break;                                         /* garbage */
        case 6: assert_true(ftruncate(fd, 0) >= 0); break; /* empty */
        }
        close(fd);
        int64_t corrupt = ckt_cache_get_stats(c).corrupt;
        assert_int_equal(ckt_cache_get(c, key, &data, &n), 0);
        assert_int_equal(ckt_cache_get_stats(c).corrupt, corrupt + 1);
        assert_non_null(strstr(ckt_cache_note(c), "damaged entry"));
        assert_int_not_equal(access(path, F_OK), 0); /* removed */
    }
    /* a valid entry under another key's name: key mismatch */
    char other[65];
    const char *p2[] = {"other"};
    ckt_cache_key(p2, NULL, 1, other);
    assert_int_equal(ckt_cache_put(c, other, payload, sizeof payload), 1);
    char opath[4200];
    ckt_cache_entry_path(c, other, opath, sizeof opath);
    ckt_cache_entry_path(c, key, path, sizeof path);
    assert_int_equal(rename(opath, path), 0);
    assert_int_equal(ckt_cache_get(c, key, &data, &n), 0);
    /* bad keys are never looked up */
    assert_int_equal(ckt_cache_get(c, "../../etc/passwd", &data, &n), 0);
    assert_int_equal(ckt_cache_put(c, "ABC", payload, 3), 0);
    assert_int_equal(ckt_cache_put(NULL, key, payload, 3), 0);
    ckt_cache_close(c);
    assert_int_equal(ckt_cache_open(dir, NULL, NULL), CKT_EINVAL);
}

static void unusable_directories_degrade(void **state)
{
    (void)state;
    ckt_cache *c;
    /* /proc refuses mkdir even for root; a regular file is not a directory */
    assert_int_equal(ckt_cache_open("/proc/ckt-cannot-exist/cache", &c, NULL), CKT_OK);
    assert_false(ckt_cache_enabled(c));
    assert_non_null(
        strstr(ckt_cache_note(c), "compile cache off: cannot create /proc/ckt-cannot-exist/cache"));
    char key[65];
    const char *p[] = {"x"};
    ckt_cache_key(p, NULL, 1, key);
    assert_int_equal(ckt_cache_put(c, key, "x", 1), 0);
    ckt_cache_close(c);
    char file[512];
    make_root();
    snprintf(file, sizeof file, "%s/a-file", root);
    FILE *f = fopen(file, "w");
    fclose(f);
    assert_int_equal(ckt_cache_open(file, &c, NULL), CKT_OK);
    assert_false(ckt_cache_enabled(c));
    ckt_cache_close(c);
    /* /sys is mounted read-only: the write probe fails where access() would say yes to root */
    if (access("/sys/kernel", F_OK) == 0) {
        assert_int_equal(ckt_cache_open("/sys/kernel", &c, NULL), CKT_OK);
        assert_false(ckt_cache_enabled(c));
        assert_non_null(strstr(ckt_cache_note(c), "not writable"));
        ckt_cache_close(c);
    }
    /* a compile through a context whose cache is unusable still works */
    ckt_context_options o = {"/proc/ckt-cannot-exist", 0, NULL};
    ckt_context *ctx;
    assert_int_equal(ckt_context_create(&o, &ctx, NULL), CKT_OK);
    ckt_compile_request req = {"cpu", "int f(void) { return 1; }", "f", NULL, 0};
    ckt_binary *b;
    ckt_error err;
    assert_int_equal(ckt_compile(ctx, &req, 0, &b, &err), CKT_OK);
    assert_false(ckt_binary_from_cache(b));
    ckt_binary_free(b);
    ckt_context_destroy(ctx);
}

static ckt_context *context_at(const char *dir)
{
    ckt_context_options o = {dir, 0, NULL};
    ckt_context *ctx;
    if (ckt_context_create(&o, &ctx, NULL)) fail_msg("context");
    return ctx;
}

static void compile_hits_and_rebuilds(void **state)
{
    (void)state;
    char dir[512];
    fresh_dir("compile", dir, sizeof dir);
    ckt_context *ctx = context_at(dir);
    char src[200];
    snprintf(src, sizeof src, "/* %ld */ int answer(void) { return 42; }", (long)getpid());
    ckt_compile_request req = {"cpu", src, "answer", NULL, 0};
    ckt_binary *a, *b;
    ckt_error err;
    assert_int_equal(ckt_compile(ctx, &req, 0, &a, &err), CKT_OK);
    assert_false(ckt_binary_from_cache(a));
    assert_int_equal(ckt_compile(ctx, &req, 0, &b, &err), CKT_OK);
    assert_true(ckt_binary_from_cache(b));
    size_t na, nb;
    const uint8_t *ca = ckt_binary_code(a, &na), *cb = ckt_binary_code(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(ca, cb, na);
    assert_string_equal(ckt_binary_kernel_name(b), "answer");
    assert_string_equal(ckt_binary_target(b), "cpu");
    assert_string_equal(ckt_binary_compiler(a), ckt_binary_compiler(b));
    ckt_binary_free(b);
    /* NO_CACHE neither reads nor writes */
    assert_int_equal(ckt_compile(ctx, &req, CKT_COMPILE_NO_CACHE, &b, &err), CKT_OK);
    assert_false(ckt_binary_from_cache(b));
    ckt_binary_free(b);
    /* other options, other target, other kernel name: other keys */
    const char *opt[] = {"-O1"};
    ckt_compile_request req2 = {"cpu", src, "answer", opt, 1};
    assert_int_equal(ckt_compile(ctx, &req2, 0, &b, &err), CKT_OK);
    assert_false(ckt_binary_from_cache(b));
    ckt_binary_free(b);
    /* the light level (CKT_COMPILE_LIGHT) is part of the key: a miss, then a hit */
    assert_int_equal(ckt_compile(ctx, &req, CKT_COMPILE_LIGHT, &b, &err), CKT_OK);
    assert_false(ckt_binary_from_cache(b));
    ckt_binary_free(b);
    assert_int_equal(ckt_compile(ctx, &req, CKT_COMPILE_LIGHT, &b, &err), CKT_OK);
    assert_true(ckt_binary_from_cache(b));
    ckt_binary_free(b);
    ckt_compile_request req3 = {"cpu:gfx90a", src, "answer", NULL, 0};
    assert_int_equal(ckt_compile(ctx, &req3, 0, &b, &err), CKT_OK);
    assert_false(ckt_binary_from_cache(b));
    assert_string_equal(ckt_binary_target(b), "cpu:gfx90a");
    ckt_binary_free(b);
    /* damage every entry on disk: each compile rebuilds, then hits again */
    DIR *d = opendir(dir);
    struct dirent *e;
    int damaged = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".ckt")) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        int fd = open(p, O_RDWR);
        unsigned char byte;
        assert_true(pread(fd, &byte, 1, 200) >= 0);
        byte ^= 1;
        assert_true(pwrite(fd, &byte, 1, 200) >= 0);
        close(fd);
        damaged++;
    }
    closedir(d);
    assert_int_equal(damaged, 4); /* plain, -O1, light, cpu:gfx90a */
    assert_int_equal(ckt_compile(ctx, &req, 0, &b, &err), CKT_OK);
    assert_false(ckt_binary_from_cache(b));
    ckt_binary_code(b, &nb);
    assert_int_equal(na, nb);
    ckt_binary_free(b);
    assert_int_equal(ckt_compile(ctx, &req, 0, &b, &err), CKT_OK);
    assert_true(ckt_binary_from_cache(b));
    ckt_binary_free(b);
    assert_int_equal(ckt_cache_get_stats(ckt_context_cache(ctx)).corrupt, 1);
    ckt_binary_free(a);
    ckt_context_destroy(ctx);
    /* a disabled context cache */
    ckt_context_options off = {dir, 1, NULL};
    assert_int_equal(ckt_context_create(&off, &ctx, NULL), CKT_OK);
    assert_null(ckt_context_cache(ctx));
    assert_int_equal(ckt_compile(ctx, &req, 0, &b, &err), CKT_OK);
    assert_false(ckt_binary_from_cache(b));
    ckt_binary_free(b);
    ckt_context_destroy(ctx);
}

static int count_entries(const char *dir) /* the .ckt files */
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) n += strstr(e->d_name, ".ckt") != NULL;
    if (d) closedir(d);
    return n;
}

static void says(const ckt_binary *b, const char *want)
{
    if (strncmp(ckt_binary_cache_status(b), want, strlen(want)))
        fail_msg("cache status '%s' does not start with '%s'", ckt_binary_cache_status(b), want);
}

static void status_says_why(void **state)
{
    (void)state;
    char dir[512], mine[512], src[200], other[200];
    fresh_dir("why", dir, sizeof dir);
    fresh_dir("why-mine", mine, sizeof mine);
    ckt_context *ctx = context_at(dir);
    snprintf(src, sizeof src, "/* %ld */ int why(void) { return 1; }", (long)getpid());
    snprintf(other, sizeof other, "/* %ld */ int why(void) { return 2; }", (long)getpid());
    const char *o1[] = {"-O1"};
    ckt_compile_request req = {"cpu", src, "why", NULL, 0}, opt = {"cpu", src, "why", o1, 1},
                        changed = {"cpu", other, "why", NULL, 0};
    ckt_binary *b;
    ckt_error err;
    assert_int_equal(ckt_compile(ctx, &req, 0, &b, &err), CKT_OK);
    says(b, "miss: nothing cached for kernel 'why' on target 'cpu'");
    ckt_binary_free(b);
    assert_int_equal(ckt_compile(ctx, &req, 0, &b, &err), CKT_OK);
    says(b, "hit");
    assert_string_equal(ckt_binary_cache_status(b), "hit");
    ckt_binary_free(b);
    assert_int_equal(ckt_compile(ctx, &opt, 0, &b, &err), CKT_OK);
    says(b, "miss: the compiler options differ (cached: '(none)'; now: '-O1')");
    ckt_binary_free(b);
    assert_int_equal(ckt_compile(ctx, &changed, 0, &b, &err), CKT_OK);
    says(b, "miss: the source differs (cached: 'sha256 ");
    ckt_binary_free(b);
    assert_int_equal(ckt_compile(ctx, &req, CKT_COMPILE_NO_CACHE, &b, &err), CKT_OK);
    says(b, "off: not read or written (cache = false)");
    ckt_binary_free(b);
    assert_int_equal(ckt_compile(NULL, &req, 0, &b, &err), CKT_OK);
    says(b, "off: no context");
    ckt_binary_free(b);
    assert_string_equal(ckt_binary_cache_status(NULL), "off: no binary");
    /* dir as the install's cache of a context at another directory: read there, nothing copied */
    setenv("CKT_INSTALL_CACHE_DIR", dir, 1);
    ckt_context *user = context_at(mine);
    assert_string_equal(ckt_cache_install_dir(ckt_context_cache(user)), dir);
    assert_int_equal(ckt_compile(user, &req, 0, &b, &err), CKT_OK);
    char want[600];
    snprintf(want, sizeof want, "hit: the installed cache %s", dir);
    assert_string_equal(ckt_binary_cache_status(b), want);
    ckt_binary_free(b);
    assert_int_equal(count_entries(mine), 0);
    /* a damaged entry there is skipped, never removed (the install's files are not the user's) */
    char key[CKT_CACHE_KEY_LEN + 1], path[1024], why[400];
    ckt_cache_key((const char *const[]){"k"}, NULL, 1, key);
    snprintf(path, sizeof path, "%s/%s.ckt", dir, key);
    FILE *f = fopen(path, "w");
    fputs("garbage", f);
    fclose(f);
    uint8_t *data;
    size_t n;
    assert_int_equal(ckt_cache_lookup(ckt_context_cache(user), key, &data, &n, why, sizeof why), 0);
    assert_non_null(strstr(why, "a damaged entry (truncated header) in the installed cache"));
    assert_int_equal(access(path, F_OK), 0);
    ckt_context_destroy(user);
    setenv("CKT_INSTALL_CACHE_DIR", "", 1); /* set and empty: none */
    user = context_at(mine);
    assert_string_equal(ckt_cache_install_dir(ckt_context_cache(user)), "");
    assert_int_equal(ckt_compile(user, &req, 0, &b, &err), CKT_OK);
    says(b, "miss: nothing cached");
    ckt_binary_free(b);
    ckt_context_destroy(user);
    unsetenv("CKT_INSTALL_CACHE_DIR");
    ckt_context_destroy(ctx);
}

static int count_prefix(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d) closedir(d);
    return n;
}

static void two_processes_at_once(void **state)
{
    (void)state;
    char dir[512];
    fresh_dir("concurrent", dir, sizeof dir);
    pid_t kids[2];
    int pipes[2][2];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(pipe(pipes[k]), 0);
        kids[k] = fork();
        if (kids[k] == 0) {
            ckt_context *ctx = context_at(dir);
            int bad = 0;
            for (int i = 0; i < 6; i++) {
                char src[128];
                snprintf(src, sizeof src, "int v%d(void) { return %d; }", i,
                         i); /* both compile the same six */
                ckt_compile_request req = {"cpu", src, "v", NULL, 0};
                ckt_binary *b;
                ckt_error err;
                if (ckt_compile(ctx, &req, 0, &b, &err) != CKT_OK)
                    bad = 1;
                else
                    ckt_binary_free(b);
            }
            ckt_context_destroy(ctx);
            /* the verdict goes through a pipe: under valgrind a child's exit status is valgrind's
             */
            if (write(pipes[k][1], bad ? "F" : "K", 1) != 1) bad = 1;
            _exit(bad);
        }
        close(pipes[k][1]);
    }
    for (int k = 0; k < 2; k++) {
        char verdict = 0;
        assert_int_equal(read(pipes[k][0], &verdict, 1), 1);
        close(pipes[k][0]);
        waitpid(kids[k], NULL, 0);
        assert_int_equal(verdict, 'K');
    }
    assert_int_equal(count_prefix(dir, ".tmp-"), 0);
    /* every entry is whole: the next six compiles all hit */
    ckt_context *ctx = context_at(dir);
    for (int i = 0; i < 6; i++) {
        char src[128];
        snprintf(src, sizeof src, "int v%d(void) { return %d; }", i, i);
        ckt_compile_request req = {"cpu", src, "v", NULL, 0};
        ckt_binary *b;
        ckt_error err;
        assert_int_equal(ckt_compile(ctx, &req, 0, &b, &err), CKT_OK);
        assert_true(ckt_binary_from_cache(b));
        ckt_binary_free(b);
    }
    assert_int_equal(ckt_cache_get_stats(ckt_context_cache(ctx)).corrupt, 0);
    ckt_context_destroy(ctx);
}

static void kill_during_write_leaves_no_partial_entry(void **state)
{
    (void)state;
    char dir[512], key[65], path[4200];
    fresh_dir("killed", dir, sizeof dir);
    const char *p[] = {"big"};
    ckt_cache_key(p, NULL, 1, key);
    size_t big = (size_t)256 << 20;
    for (int attempt = 0; attempt < 3; attempt++) {
        pid_t kid = fork();
        if (kid == 0) {
            ckt_cache *c;
            ckt_cache_open(dir, &c, NULL);
            uint8_t *data = calloc(1, big);
            for (;;) ckt_cache_put(c, key, data, big); /* until killed */
        }
        struct timespec t = {0, (attempt + 1) * 30 * 1000000L};
        nanosleep(&t, NULL);
        kill(kid, SIGKILL);
        waitpid(kid, NULL, 0);
        ckt_cache *c;
        assert_int_equal(ckt_cache_open(dir, &c, NULL), CKT_OK);
        ckt_cache_entry_path(c, key, path, sizeof path);
        uint8_t *data;
        size_t n;
        /* either no entry yet, or a whole one: never a partial file under the entry's name */
        int hit = ckt_cache_get(c, key, &data, &n);
        assert_int_equal(ckt_cache_get_stats(c).corrupt, 0);
        if (hit) {
            assert_int_equal(n, big);
            free(data);
        }
        /* the dead writer's temporary file is cleaned up once stale */
        ckt_cache_remove_stale(c, 0);
        assert_int_equal(count_prefix(dir, ".tmp-"), 0);
        ckt_cache_close(c);
        unlink(path);
    }
    /* a stale temporary file from long ago is removed when a cache opens */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s/.tmp-old-writer", dir);
    FILE *f = fopen(tmp, "w");
    fputs("half an entry", f);
    fclose(f);
    struct utimbuf old = {time(NULL) - 7200, time(NULL) - 7200};
    utime(tmp, &old);
    ckt_cache *c;
    assert_int_equal(ckt_cache_open(dir, &c, NULL), CKT_OK);
    assert_int_equal(ckt_cache_get_stats(c).stale_removed, 1);
    assert_int_not_equal(access(tmp, F_OK), 0);
    ckt_cache_close(c);
}

static int cleanup(void **state)
{
    (void)state;
    if (root[0]) {
        char *argv[] = {"rm", "-rf", root, NULL};
        pid_t p = fork();
        if (p == 0) {
            execvp("rm", argv);
            _exit(1);
        }
        waitpid(p, NULL, 0);
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(keys_are_length_prefixed),
        cmocka_unit_test(put_get_and_damage),
        cmocka_unit_test(unusable_directories_degrade),
        cmocka_unit_test(compile_hits_and_rebuilds),
        cmocka_unit_test(status_says_why),
        cmocka_unit_test(two_processes_at_once),
        cmocka_unit_test(kill_during_write_leaves_no_partial_entry),
    };
    return cmocka_run_group_tests(tests, NULL, cleanup);
}
