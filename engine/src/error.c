#include "ckt/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

ckt_status ckt_fail(ckt_error *err, ckt_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = s;
    }
    return s;
}

ckt_status ckt_fail_prefix(ckt_error *err, const char *prefix)
{
    if (!err) return CKT_EINVAL;
    char tmp[CKT_ERROR_MSG_CAP];
    snprintf(tmp, sizeof tmp, "%s%s", prefix, err->msg);
    memcpy(err->msg, tmp, sizeof tmp);
    return err->status;
}

void ckt_error_clear(ckt_error *err)
{
    if (err) {
        err->status = CKT_OK;
        err->msg[0] = '\0';
    }
}

const char *ckt_status_name(ckt_status s)
{
    switch (s) {
    case CKT_OK: return "ok";
    case CKT_EINVAL: return "invalid argument";
    case CKT_EOVERFLOW: return "integer overflow";
    case CKT_ECAPACITY: return "capacity exceeded";
    case CKT_ENOMEM: return "out of memory";
    case CKT_ERUNTIME: return "runtime unavailable";
    case CKT_EUNSUPPORTED: return "unsupported";
    case CKT_ECOMPILE: return "compile error";
    case CKT_EIO: return "i/o error";
    case CKT_ELIMIT: return "limit exceeded";
    }
    return "unknown status";
}
