/* GPU libraries loaded at run time (dynlib.h). */
#include <dlfcn.h>

#include "dynlib.h"

const char *const ckt_dynlib_hip_names[] = {"libamdhip64.so.6", "libamdhip64.so.5",
                                            "libamdhip64.so", "/opt/rocm/lib/libamdhip64.so", NULL};

void *ckt_dynlib_open(const char *const *names, const char *needs, const char **opened)
{
    for (const char *const *n = names; *n; n++) {
        void *lib = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        if (!lib) continue;
        if (needs && !dlsym(lib, needs)) {
            dlclose(lib);
            continue;
        }
        if (opened) *opened = *n;
        return lib;
    }
    return NULL;
}

const char *ckt_dynlib_bind(void *lib, const ckt_dynsym *syms, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (!*syms[i].slot && syms[i].alt) *syms[i].slot = dlsym(lib, syms[i].alt);
        if (!*syms[i].slot && !syms[i].optional) {
            dlclose(lib);
            return syms[i].name;
        }
    }
    return NULL;
}
