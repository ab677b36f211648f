/* Replays fuzz inputs through a target without libFuzzer: every file named on the command line,
 * or every file in a named directory. Built with the ordinary compiler, so the kept corpora and
 * the crash regressions in tests/fuzz/regressions/<target>/ run in every build and under valgrind.
 * A broken invariant traps (FUZZ_CHECK), which fails the test; so does a path that does not exist
 * (every target has its regressions folder, kept by a .gitkeep until its first crash file). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "replay: cannot open %s\n", path); return 1; }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) { free(buf); buf = NULL; break; }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) { fprintf(stderr, "replay: out of memory reading %s\n", path); return 1; }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int replay(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) { /* a missing corpus or regressions folder is an error, not 0 inputs */
        fprintf(stderr, "replay: no such file or folder: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) { ++*count; return replay_file(path); }
    DIR *d = opendir(path);
    if (!d) { fprintf(stderr, "replay: cannot read %s\n", path); return 1; }
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *full = malloc(len);
        if (!full) { bad = 1; break; }
        snprintf(full, len, "%s/%s", path, e->d_name);
        bad |= replay(full, count);
        free(full);
    }
    closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0, count = 0;
    for (int i = 1; i < argc; i++) bad |= replay(argv[i], &count);
    printf("replayed %d inputs\n", count);
    return bad;
}
