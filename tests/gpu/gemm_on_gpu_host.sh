#!/usr/bin/env bash
# The library GEMM on the offline NVIDIA GPU host, in one call: build ckt (with the carried Lua
# packages) and the cuBLAS bench module, then bench/gemm.lua — GPU correctness (every dtype and
# major combination element by element against the double reference, cuBLAS too), TFLOP/s of the
# configurations against cuBLAS at 4096^3 and 8192^3 validated against cuBLAS — and the JIT
# latency. Logs and JSON land in $OUT.
#   bash tests/gpu/gemm_on_gpu_host.sh [configs] [sizes] [majors]   (see bench/gemm.lua)
set -u
out=${OUT:-/tmp/ckt-gpu-out}
mkdir -p "$out"
if [ ! -x /tmp/ckt-build/ckt-lua ] || [ ! -f /tmp/ckt-build/ckt_cublas.so ]; then
  args=$(bash tools/offline-lua.sh unpack .deps) || exit 1
  cmake -S . -B /tmp/ckt-build $args -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
fi
cmake --build /tmp/ckt-build -j16 2>&1 | grep -E "error|warning" ;
lua=/tmp/ckt-build/ckt-lua
export CKT_CACHE_DIR=/tmp/ckt-cache CKT_BENCH_LIB=/tmp/ckt-build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "== GEMM: correctness and TFLOP/s against cuBLAS"
$lua bench/gemm.lua sm_90 "$out/gemm_h100.json" "${1:-default,128x128x32/256/3,128x256x32/256/3,128x128x32/128/4}" "${2:-4096,8192}" "${3:-kk,kn,mk,mn}" 2>&1 | tee "$out/gemm.log" | grep -v "^ckt vs\|^cuBLAS vs"
rc=${PIPESTATUS[0]}
echo "== JIT latency (cold NVRTC compile, cache hit)"
$lua bench/jit_kernels.lua sm_90 2>&1 | tail -8 | tee "$out/jit_gemm.log"
exit $rc
