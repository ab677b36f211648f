#!/usr/bin/env bash
# A short check of a tree on the offline NVIDIA GPU host: build, the GPU tests (label gpu), the
# sm_90a GEMM's small checks (both copies: GPU against cpu:sm_90a and the double reference) and
# one timed size against cuBLAS. Use after changes to the runtime, the JIT or the emitters; the
# full runs are run_on_gpu_host.sh and gemm_hopper_on_gpu_host.sh. Exits non-zero when any check
# failed (each command's own exit status decides, not a grep of its rows); the failed checks are
# listed at the end.
set -u
. "$(dirname "$0")/host_common.sh"
host_build always || { host_finish; exit 1; }
host_device || { host_finish; exit 1; }
export CKT_BENCH_LIB=$build
echo "== GPU tests (label gpu)"
host_ctest_gpu "$out/gpu_tests.log"
for c in default default@cp.async; do
  echo "== sm_90a GEMM, small checks, $c"
  host_check "bench/gemm_hopper_check.lua small $c" "$out/check_$c.log" "tail -2" $lua bench/gemm_hopper_check.lua small "$c"
done
echo "== sm_90a GEMM at 8192^3 against cuBLAS"
# bench/gemm.lua exits non-zero when a check or a row failed (a row that says "failed" or
# "NO (...)"); the row must be there too
if host_check "bench/gemm.lua sm_90a 8192" "$out/gemm_smoke.log" "grep '^| 8192'" \
    $lua bench/gemm.lua sm_90a "$out/gemm_smoke.json" default 8192 kk,mn; then
  grep -q "^| 8192 " "$out/gemm_smoke.log" || host_fail "bench/gemm.lua sm_90a 8192: no result row ($out/gemm_smoke.log)"
  if grep "^| 8192 " "$out/gemm_smoke.log" | grep -q -E "failed|NO \("; then host_fail "bench/gemm.lua sm_90a 8192: a row failed"; fi
fi
host_finish
