/* ckt — status codes and error messages.
 * Every engine function that can fail returns a ckt_status and, on failure, fills
 * a caller-provided ckt_error with a message that names the argument and the
 * reason ("composition: stride 3 of B does not divide shape 4 of A").
 * The engine never aborts or exits on bad input. */
#ifndef CKT_ERROR_H
#define CKT_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ckt_status {
    CKT_OK = 0,
    CKT_EINVAL,       /* a bad argument: wrong value, rank mismatch, non-divisible tile */
    CKT_EOVERFLOW,    /* 64-bit integer overflow */
    CKT_ECAPACITY,    /* beyond a fixed capacity (rank, depth, nodes) */
    CKT_ENOMEM,       /* allocation failed */
    CKT_ERUNTIME,     /* a GPU runtime / compiler library is missing or failed */
    CKT_EUNSUPPORTED, /* target or feature not supported here */
    CKT_ECOMPILE,     /* device code failed to compile */
    CKT_EIO,          /* file system */
    CKT_ELIMIT        /* a sandbox limit (memory, instructions) was hit */
} ckt_status;

#define CKT_ERROR_MSG_CAP 1024

typedef struct ckt_error {
    ckt_status status;
    char msg[CKT_ERROR_MSG_CAP];
} ckt_error;

/* printf's format checks for a function whose format is argument f and whose values start at a */
#if defined(__GNUC__)
#define CKT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CKT_PRINTF(f, a)
#endif

/* Record a failure: formats the message into err (which may be NULL) and
 * returns s, so callers can write `return ckt_fail(err, CKT_EINVAL, "...")`. */
ckt_status ckt_fail(ckt_error *err, ckt_status s, const char *fmt, ...) CKT_PRINTF(3, 4);

/* Prefix an existing message with context ("logical_divide: " + inner). */
ckt_status ckt_fail_prefix(ckt_error *err, const char *prefix);

void ckt_error_clear(ckt_error *err);
const char *ckt_status_name(ckt_status s);

#ifdef __cplusplus
}
#endif
#endif
