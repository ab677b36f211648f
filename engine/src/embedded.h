/* ckt — text files embedded at build time (cmake/ckt_embed.cmake): the device preludes in the
 * engine, the Lua kernel library in the bindings. A table ends with a {NULL, NULL, 0} entry. */
#ifndef CKT_EMBEDDED_H
#define CKT_EMBEDDED_H

#include <stddef.h>

typedef struct ckt_embedded_file {
    const char *name; /* the file name, without its directory */
    const char *text; /* NUL-terminated */
    size_t length;    /* bytes, without the NUL */
} ckt_embedded_file;

#endif
