/* Parameter kinds (ckt/param.h). */
#include <string.h>

#include "ckt/param.h"

size_t ckt_param_size(ckt_param_kind k)
{
    switch (k) {
    case CKT_PARAM_PTR: return sizeof(void *);
    case CKT_PARAM_I32: return 4;
    case CKT_PARAM_I64: return 8;
    case CKT_PARAM_F32: return 4;
    case CKT_PARAM_TMAP: return 128;
    }
    return 0;
}

const char *ckt_param_kind_name(ckt_param_kind k)
{
    switch (k) {
    case CKT_PARAM_PTR: return "ptr";
    case CKT_PARAM_I32: return "i32";
    case CKT_PARAM_I64: return "i64";
    case CKT_PARAM_F32: return "f32";
    case CKT_PARAM_TMAP: return "tmap";
    }
    return "?";
}

int ckt_param_kind_parse(const char *name, ckt_param_kind *out)
{
    static const ckt_param_kind kinds[] = {CKT_PARAM_PTR, CKT_PARAM_I32, CKT_PARAM_I64,
                                           CKT_PARAM_F32, CKT_PARAM_TMAP};
    for (size_t i = 0; name && i < sizeof kinds / sizeof *kinds; i++)
        if (!strcmp(name, ckt_param_kind_name(kinds[i]))) {
            *out = kinds[i];
            return 1;
        }
    return 0;
}
