/* Identifiers the generated source's dialects already use (kernel_names.c). Not installed. */
#ifndef CKT_KERNEL_NAMES_H
#define CKT_KERNEL_NAMES_H

#include <stdbool.h>

/* true when a parameter of this name would collide with a keyword, a macro or function of the
 * preludes' headers, or a CUDA / HIP built-in */
bool ckt_kernel_name_reserved(const char *name);

#endif
