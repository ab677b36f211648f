#!/usr/bin/env bash
# A short check of a tree on the offline NVIDIA GPU host: build, the GPU tests (label gpu), the
# sm_90a GEMM's small checks (both copies: GPU against cpu:sm_90a and the double reference) and
# one timed size against cuBLAS. Use after changes to the runtime, the JIT or the emitters; the
# full runs are run_on_gpu_host.sh and gemm_hopper_on_gpu_host.sh.
set -u
. "$(dirname "$0")/host_common.sh"
host_build always || exit 1
host_device
export CKT_BENCH_LIB=$build
rc=0
echo "== GPU tests (label gpu)"
(cd "$build" && ctest -L gpu --output-on-failure 2>&1 | tail -15) | tee "$out/gpu_tests.log"
grep -q "100% tests passed" "$out/gpu_tests.log" || rc=1
for c in default default@cp.async; do
  echo "== sm_90a GEMM, small checks, $c"
  $lua bench/gemm_hopper_check.lua small "$c" > "$out/check_$c.log" 2>&1 || rc=1
  tail -2 "$out/check_$c.log"
done
echo "== sm_90a GEMM at 8192^3 against cuBLAS"
$lua bench/gemm.lua sm_90a "$out/gemm_smoke.json" default 8192 kk,mn 2>&1 | grep "^| 8192" || rc=1
exit $rc
