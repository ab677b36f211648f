/* The code-object readers on arbitrary bytes: the AMDGPU resources and kernel arguments (ELF +
 * msgpack metadata) and the cubin parameter records (.nv.info.k), each a result or an error with
 * a message, never an out-of-bounds read (ASan) or a hang. Seeds: a gfx90a object, NVRTC 13.0
 * cubins of a kernel named k (cuda13_*). */
#include "ckt/jit.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ckt_resources r;
    ckt_error err;
    err.msg[0] = 0;
    if (ckt_code_object_resources(data, size, &r, &err) != CKT_OK) FUZZ_CHECK(err.msg[0] != 0);
    int64_t sizes[16];
    int count = -1;
    err.msg[0] = 0;
    if (ckt_code_object_kernel_args(data, size, "k", sizes, 16, &count, &err) == CKT_OK) FUZZ_CHECK(count >= 0 && count <= 16);
    else FUZZ_CHECK(err.msg[0] != 0);
    count = -1;
    err.msg[0] = 0;
    if (ckt_cubin_kernel_args(data, size, "k", sizes, 16, &count, &err) == CKT_OK) FUZZ_CHECK(count >= 0 && count <= 16);
    else FUZZ_CHECK(err.msg[0] != 0);
    return 0;
}
