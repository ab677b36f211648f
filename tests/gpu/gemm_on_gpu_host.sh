#!/usr/bin/env bash
# The library GEMM on the offline NVIDIA GPU host, in one call: build ckt (with the carried Lua
# packages) and the cuBLAS bench module, then bench/gemm.lua — GPU correctness (every dtype and
# major combination element by element against the double reference, cuBLAS too), TFLOP/s of the
# configurations against cuBLAS at 4096^3 and 8192^3 validated against cuBLAS — the bank model's
# shared-memory wavefronts against ncu's, and the JIT latency. Logs and JSON land in $OUT.
#   bash tests/gpu/gemm_on_gpu_host.sh [configs] [sizes] [majors]   (see bench/gemm.lua)
set -u
. "$(dirname "$0")/host_common.sh"
host_build || exit 1
export CKT_BENCH_LIB=$build
host_device
echo "== GEMM: correctness and TFLOP/s against cuBLAS"
$lua bench/gemm.lua sm_90 "$out/gemm_h100.json" "${1:-default,128x256x32/256/3,256x128x32/256/3,128x128x32/128/4}" "${2:-4096,8192}" "${3:-kk,kn,mk,mn}" 2>&1 | tee "$out/gemm.log" | grep -v "^ckt vs\|^cuBLAS vs"
rc=${PIPESTATUS[0]}
echo "== LDS bank model vs ncu (library GEMM launches: ldmatrix reads, cp.async writes)"
ncu_wavefronts gemm_bank bench/gemm_banks.lua sm_90
python3 "$gpu_dir/ncu_banks.py" gemm "$out/gemm_bank" | tee "$out/gemm_bank_compare.md"
echo "== JIT latency (cold NVRTC compile, cache hit)"
$lua bench/jit_kernels.lua sm_90 2>&1 | tail -8 | tee "$out/jit_gemm.log"
exit $rc
