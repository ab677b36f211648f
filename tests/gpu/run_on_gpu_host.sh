#!/usr/bin/env bash
# On the offline NVIDIA GPU host: build ckt with the carried Lua packages, run the GPU tests,
# the kernel scripts on the GPU, the kernel benchmarks, JIT latency, and the LDS bank model
# against ncu's shared-memory wavefront counts; results (logs, JSON) land in $OUT.
# Exits non-zero when any check failed (host_common.sh: host_check, host_finish); the failed
# checks are listed at the end.
set -u
. "$(dirname "$0")/host_common.sh"
host_build always || { host_finish; exit 1; }
host_device || { host_finish; exit 1; }
echo "== GPU tests (label gpu)"
host_ctest_gpu "$out/gpu_tests.log"
echo "== scripts on the GPU (--target sm_90), script start to first result"
: > "$out/scripts.log"
for s in copy transpose; do
  t0=$(date +%s%N); $lua --target sm_90 scripts/$s.lua > "$out/script_$s.log" 2>&1; rc=$?; t1=$(date +%s%N)
  echo "scripts/$s.lua: rc=$rc, $(( (t1 - t0) / 1000000 )) ms start to result; $(grep -E '^run on' "$out/script_$s.log")" | tee -a "$out/scripts.log"
  [ "$rc" -eq 0 ] || host_fail "scripts/$s.lua --target sm_90 (exit status $rc; $out/script_$s.log)"
  grep -q "^run on .*matches the reference" "$out/script_$s.log" || host_fail "scripts/$s.lua: no 'matches the reference' line"
done
echo "== JIT latency of the transpose on the GPU host"
host_check "bench/jit_kernels.lua sm_90" "$out/jit_kernels.log" cat $lua bench/jit_kernels.lua sm_90
# the bench prints a "skipped: <error>" row for a kernel that did not compile: here that is a failure
if grep -q "skipped:" "$out/jit_kernels.log"; then host_fail "bench/jit_kernels.lua: rows skipped ($out/jit_kernels.log)"; fi
echo "== kernel bandwidth vs device-to-device copy"
host_check "bench/kernels.lua sm_90" "$out/kernels.log" cat $lua bench/kernels.lua sm_90 "$out/kernels_h100.json"
echo "== GEMM against cuBLAS (bench/gemm.lua; tests/gpu/gemm_on_gpu_host.sh runs it alone)"
CKT_BENCH_LIB=$build host_check "bench/gemm.lua sm_90" "$out/gemm.log" "tail -40" $lua bench/gemm.lua sm_90 "$out/gemm_h100.json"
echo "== LDS bank model vs ncu (transpose variants)"
if ncu_wavefronts bank bench/transpose_banks.lua sm_90; then
  host_check "ncu_banks.py transpose" "$out/bank_compare.md" cat python3 "$gpu_dir/ncu_banks.py" transpose "$out/bank"
  # ncu_banks.py prints "N of M launches match" and exits 0 either way: every launch must match,
  # and there must be launches
  summary=$(grep -E '^[0-9]+ of [0-9]+ launches match$' "$out/bank_compare.md")
  n=${summary%% of*}; m=${summary#* of }; m=${m%% *}
  if [ -z "$summary" ] || [ "$m" -eq 0 ] || [ "$n" -ne "$m" ]; then
    host_fail "LDS bank model vs ncu: ${summary:-no comparison} ($out/bank_compare.md)"
  fi
fi
host_finish
