#!/usr/bin/env bash
# The library GEMM on the offline NVIDIA GPU host, in one call: build ckt (with the carried Lua
# packages) and the cuBLAS bench module, then bench/gemm.lua — GPU correctness (every dtype and
# major combination element by element against the double reference, cuBLAS too), TFLOP/s of the
# configurations against cuBLAS at 4096^3 and 8192^3 validated against cuBLAS — the bank model's
# shared-memory wavefronts against ncu's, and the JIT latency. Logs and JSON land in $OUT.
# Exits non-zero when any check failed; the failed checks are listed at the end.
#   bash tests/gpu/gemm_on_gpu_host.sh [configs] [sizes] [majors]   (see bench/gemm.lua)
set -u
. "$(dirname "$0")/host_common.sh"
host_build || { host_finish; exit 1; }
export CKT_BENCH_LIB=$build
host_device || { host_finish; exit 1; }
echo "== GEMM: correctness and TFLOP/s against cuBLAS"
host_check "bench/gemm.lua sm_90" "$out/gemm.log" "grep -v '^ckt vs\|^cuBLAS vs'" \
  $lua bench/gemm.lua sm_90 "$out/gemm_h100.json" "${1:-default,128x256x32/256/3,256x128x32/256/3,128x128x32/128/4}" "${2:-4096,8192}" "${3:-kk,kn,mk,mn}"
echo "== LDS bank model vs ncu (library GEMM launches: ldmatrix reads, cp.async writes)"
# (ncu_banks.py gemm shows the counts side by side, no verdict: cp.async copies may count outside
# the st metric; what must hold is that both the predictions and ncu ran and gave rows)
if ncu_wavefronts gemm_bank bench/gemm_banks.lua sm_90; then
  host_check "ncu_banks.py gemm" "$out/gemm_bank_compare.md" cat python3 "$gpu_dir/ncu_banks.py" gemm "$out/gemm_bank"
  grep -q "^| [^-l]" "$out/gemm_bank_compare.md" || host_fail "LDS bank model vs ncu (GEMM): no launches compared ($out/gemm_bank_compare.md)"
fi
echo "== JIT latency (cold NVRTC compile, cache hit)"
host_check "bench/jit_kernels.lua sm_90" "$out/jit_gemm.log" "tail -8" $lua bench/jit_kernels.lua sm_90
if grep -q "skipped:" "$out/jit_gemm.log"; then host_fail "bench/jit_kernels.lua: rows skipped ($out/jit_gemm.log)"; fi
host_finish
