/* The AMDGPU code-object reader (ELF + msgpack metadata) on arbitrary bytes: a result or an
 * error, never an out-of-bounds read (ASan) or a hang. */
#include "ckt/jit.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ckt_resources r;
    ckt_error err;
    err.msg[0] = 0;
    if (ckt_code_object_resources(data, size, &r, &err) != CKT_OK) FUZZ_CHECK(err.msg[0] != 0);
    return 0;
}
