/* Names a kernel parameter cannot take: the dialects spell parameters as they are named, so a
 * parameter called NAN, INT64_MAX, threadIdx, sqrtf or class would be replaced by a macro, shadow
 * a function the prelude calls, or not parse, and the error would surface inside the device
 * compiler. The table is what the C prelude's headers (<math.h>, <stdint.h>, <string.h>) define
 * as macros and functions, the C / C++ keywords, and the CUDA / HIP built-ins and vector types
 * (sorted for bsearch, strcmp order); names starting with '_' and an upper-case letter are
 * reserved to the implementation (_Pragma, _Bool, ...). */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_names.h"

static const char *const reserved[] = {
    "FP_ILOGB0", "FP_ILOGBNAN", "FP_INFINITE", "FP_NAN", "FP_NORMAL", "FP_SUBNORMAL", "FP_ZERO", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL",
    "INFINITY", "INT16_C", "INT16_MAX", "INT16_MIN", "INT32_C", "INT32_MAX", "INT32_MIN", "INT64_C", "INT64_MAX", "INT64_MIN", "INT8_C",
    "INT8_MAX", "INT8_MIN", "INTMAX_C", "INTMAX_MAX", "INTMAX_MIN", "INTPTR_MAX", "INTPTR_MIN", "INT_FAST16_MAX", "INT_FAST16_MIN",
    "INT_FAST32_MAX", "INT_FAST32_MIN", "INT_FAST64_MAX", "INT_FAST64_MIN", "INT_FAST8_MAX", "INT_FAST8_MIN", "INT_LEAST16_MAX",
    "INT_LEAST16_MIN", "INT_LEAST32_MAX", "INT_LEAST32_MIN", "INT_LEAST64_MAX", "INT_LEAST64_MIN", "INT_LEAST8_MAX", "INT_LEAST8_MIN",
    "MATH_ERREXCEPT", "MATH_ERRNO", "NAN", "NULL", "PTRDIFF_MAX", "PTRDIFF_MIN", "SIG_ATOMIC_MAX", "SIG_ATOMIC_MIN", "SIZE_MAX",
    "UINT16_C", "UINT16_MAX", "UINT32_C", "UINT32_MAX", "UINT64_C", "UINT64_MAX", "UINT8_C", "UINT8_MAX", "UINTMAX_C", "UINTMAX_MAX",
    "UINTPTR_MAX", "UINT_FAST16_MAX", "UINT_FAST32_MAX", "UINT_FAST64_MAX", "UINT_FAST8_MAX", "UINT_LEAST16_MAX", "UINT_LEAST32_MAX",
    "UINT_LEAST64_MAX", "UINT_LEAST8_MAX", "WCHAR_MAX", "WCHAR_MIN", "WINT_MAX", "WINT_MIN", "acos", "acosf", "acosh", "acoshf", "acoshl",
    "acosl", "alignas", "alignof", "and", "and_eq", "asin", "asinf", "asinh", "asinhf", "asinhl", "asinl", "asm", "assert", "atan",
    "atan2", "atan2f", "atan2l", "atanf", "atanh", "atanhf", "atanhl", "atanl", "atomicAdd", "atomicCAS", "atomicExch", "atomicMax",
    "atomicMin", "atomic_cancel", "atomic_commit", "atomic_noexcept", "auto", "bitand", "bitor", "blockDim", "blockIdx", "bool", "break",
    "case", "catch", "cbrt", "cbrtf", "cbrtl", "ceil", "ceilf", "ceill", "char", "char1", "char16_t", "char2", "char3", "char32_t",
    "char4", "char8_t", "class", "clock", "clock64", "co_await", "co_return", "co_yield", "compl", "concept", "const", "const_cast",
    "consteval", "constexpr", "constinit", "continue", "copysign", "copysignf", "copysignl", "cos", "cosf", "cosh", "coshf", "coshl",
    "cosl", "decltype", "default", "delete", "dim3", "do", "double", "double1", "double2", "double3", "double4", "double_t",
    "dynamic_cast", "else", "enum", "erf", "erfc", "erfcf", "erfcl", "erff", "erfl", "errno", "exp", "exp2", "exp2f", "exp2l", "expf",
    "expl", "explicit", "expm1", "expm1f", "expm1l", "export", "extern", "fabs", "fabsf", "fabsl", "false", "fdim", "fdimf", "fdiml",
    "final", "float", "float1", "float2", "float3", "float4", "float_t", "floor", "floorf", "floorl", "fma", "fmaf", "fmal", "fmax",
    "fmaxf", "fmaxl", "fmin", "fminf", "fminl", "fmod", "fmodf", "fmodl", "for", "fpclassify", "free", "frexp", "frexpf", "frexpl",
    "friend", "goto", "gridDim", "half", "half2", "hypot", "hypotf", "hypotl", "if", "ilogb", "ilogbf", "ilogbl", "import", "inline",
    "int", "int1", "int16_t", "int2", "int3", "int32_t", "int4", "int64_t", "int8_t", "intmax_t", "intptr_t", "isfinite", "isgreater",
    "isgreaterequal", "isinf", "isless", "islessequal", "islessgreater", "isnan", "isnormal", "isunordered", "ldexp", "ldexpf", "ldexpl",
    "lgamma", "lgammaf", "lgammal", "llrint", "llrintf", "llrintl", "llround", "llroundf", "llroundl", "log", "log10", "log10f", "log10l",
    "log1p", "log1pf", "log1pl", "log2", "log2f", "log2l", "logb", "logbf", "logbl", "logf", "logl", "long", "long1", "long2", "long3",
    "long4", "longlong1", "longlong2", "longlong3", "longlong4", "lrint", "lrintf", "lrintl", "lround", "lroundf", "lroundl", "malloc",
    "math_errhandling", "memchr", "memcmp", "memcpy", "memmove", "memset", "modf", "modff", "modfl", "module", "mutable", "namespace",
    "nan", "nanf", "nanl", "nearbyint", "nearbyintf", "nearbyintl", "new", "nextafter", "nextafterf", "nextafterl", "nexttoward",
    "nexttowardf", "nexttowardl", "noexcept", "not", "not_eq", "nullptr", "nv_bfloat16", "offsetof", "operator", "or", "or_eq", "override",
    "pow", "powf", "powl", "printf", "private", "protected", "ptrdiff_t", "public", "reflexpr", "register", "reinterpret_cast",
    "remainder", "remainderf", "remainderl", "remquo", "remquof", "remquol", "requires", "restrict", "return", "rint", "rintf", "rintl",
    "round", "roundf", "roundl", "scalbln", "scalblnf", "scalblnl", "scalbn", "scalbnf", "scalbnl", "short", "short1", "short2", "short3",
    "short4", "signbit", "signed", "sin", "sinf", "sinh", "sinhf", "sinhl", "sinl", "size_t", "sizeof", "sqrt", "sqrtf", "sqrtl", "static",
    "static_assert", "static_cast", "strcat", "strchr", "strcmp", "strcoll", "strcpy", "strcspn", "strerror", "strlen", "strncat",
    "strncmp", "strncpy", "strpbrk", "strrchr", "strspn", "strstr", "strtok", "struct", "strxfrm", "switch", "synchronized", "tan", "tanf",
    "tanh", "tanhf", "tanhl", "tanl", "template", "tgamma", "tgammaf", "tgammal", "this", "threadIdx", "thread_local", "throw", "true",
    "trunc", "truncf", "truncl", "try", "typedef", "typeid", "typename", "uchar1", "uchar2", "uchar3", "uchar4", "uint1", "uint16_t",
    "uint2", "uint3", "uint32_t", "uint4", "uint64_t", "uint8_t", "uintmax_t", "uintptr_t", "ulong1", "ulong2", "ulong3", "ulong4",
    "ulonglong1", "ulonglong2", "ulonglong3", "ulonglong4", "union", "unsigned", "ushort1", "ushort2", "ushort3", "ushort4", "using",
    "virtual", "void", "volatile", "warpSize", "wchar_t", "while", "xor", "xor_eq",
};

static int cmp(const void *key, const void *elem) { return strcmp(key, *(const char *const *)elem); }

bool ckt_kernel_name_reserved(const char *name)
{
    if (!name) return true;
    if (name[0] == '_' && (isupper((unsigned char)name[1]) || name[1] == '_')) return true;
    return bsearch(name, reserved, sizeof reserved / sizeof *reserved, sizeof *reserved, cmp) != NULL;
}
