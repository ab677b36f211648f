/* Layout and tuple strings: parse never crashes; a parsed layout prints and parses back equal. */
#include <stdlib.h>
#include <string.h>

#include "ckt/ckt.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    ckt_layout l, back;
    ckt_tuple t;
    ckt_error err;
    if (ckt_layout_parse(s, &l, &err) == CKT_OK) {
        char buf[4096];
        int n = ckt_layout_to_string(&l, buf, sizeof buf);
        FUZZ_CHECK(n > 0);
        if (n < (int)sizeof buf) {
            FUZZ_CHECK(ckt_layout_parse(buf, &back, &err) == CKT_OK);
            FUZZ_CHECK(ckt_layout_equal(&l, &back));
        }
        int64_t size_l = ckt_layout_size(&l), off;
        FUZZ_CHECK(size_l > 0);
        FUZZ_CHECK(ckt_layout_eval(&l, size_l - 1, &off, &err) == CKT_OK);
    } else {
        FUZZ_CHECK(err.msg[0] != 0);
    }
    if (ckt_tuple_parse(s, &t, &err) != CKT_OK) FUZZ_CHECK(err.msg[0] != 0);
    free(s);
    return 0;
}
