/* ckt device prelude — what the CUDA and HIP preludes share: spliced into both at build time where
 * a line names it (cmake/ckt_embed.cmake), all but this comment. The integer types, without
 * headers: NVRTC and hipRTC compile the preludes with none. */
typedef signed char ckt_i8;
typedef unsigned char ckt_u8;
typedef unsigned short ckt_u16;
typedef int ckt_i32;
typedef unsigned int ckt_u32;
typedef long long ckt_i64;
typedef unsigned long long ckt_u64;
