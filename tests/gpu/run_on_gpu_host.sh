#!/usr/bin/env bash
# On the offline NVIDIA GPU host: build ckt with the carried Lua packages, run the GPU tests,
# the kernel scripts on the GPU, the kernel benchmarks, JIT latency, and the LDS bank model
# against ncu's shared-memory wavefront counts; results (logs, JSON) land in $OUT.
set -u
. "$(dirname "$0")/host_common.sh"
host_build always || exit 1
host_device
echo "== GPU tests (label gpu)"
(cd "$build" && ctest -L gpu --output-on-failure 2>&1 | tail -40) | tee "$out/gpu_tests.log"
echo "== scripts on the GPU (--target sm_90), script start to first result"
for s in copy transpose; do
  t0=$(date +%s%N); $lua --target sm_90 scripts/$s.lua > "$out/script_$s.log" 2>&1; rc=$?; t1=$(date +%s%N)
  echo "scripts/$s.lua: rc=$rc, $(( (t1 - t0) / 1000000 )) ms start to result; $(grep -E '^run on' "$out/script_$s.log")"
done | tee "$out/scripts.log"
echo "== JIT latency of the transpose on the GPU host"
$lua bench/jit_kernels.lua sm_90 2>&1 | tee "$out/jit_kernels.log"
echo "== kernel bandwidth vs device-to-device copy"
$lua bench/kernels.lua sm_90 "$out/kernels_h100.json" 2>&1 | tee "$out/kernels.log"
echo "== GEMM against cuBLAS (bench/gemm.lua; tests/gpu/gemm_on_gpu_host.sh runs it alone)"
CKT_BENCH_LIB=$build $lua bench/gemm.lua sm_90 "$out/gemm_h100.json" 2>&1 | tee "$out/gemm.log" | tail -40
echo "== LDS bank model vs ncu (transpose variants)"
ncu_wavefronts bank bench/transpose_banks.lua sm_90
python3 "$gpu_dir/ncu_banks.py" transpose "$out/bank" | tee "$out/bank_compare.md"
true
