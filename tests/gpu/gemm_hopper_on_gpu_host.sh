#!/usr/bin/env bash
# The sm_90a library GEMM (wgmma through shared-memory descriptors) on the offline H100/H200
# host, in one call: build ckt and the cuBLAS bench module; bench/gemm_hopper_check.lua (GPU vs
# the CPU target cpu:sm_90a and the double reference, every dtype, major and configuration, then
# non-square shapes against cuBLAS); compute-sanitizer memcheck and racecheck on a small problem
# (the default, bulk tensor copies, and copy = "cp.async", or the configurations in $SAN_CONFIGS);
# the schedules of thread-block clusters and split-K, and the tiles that take K-major B only
# (192 x 176 in clusters along N, 128 x 208), checked the same way at the majors they take;
# bench/gemm.lua on sm_90a (TFLOP/s against cuBLAS at the square sizes, cold NVRTC times). Logs
# land in $OUT. Exits non-zero when any check failed (each command's own exit status, not tee's);
# the failed checks are listed at the end.
#   bash tests/gpu/gemm_hopper_on_gpu_host.sh [configs] [sizes] [majors]   (see bench/gemm.lua)
set -u
. "$(dirname "$0")/host_common.sh"
host_build || { host_finish; exit 1; }
export CKT_BENCH_LIB=$build
host_device || { host_finish; exit 1; }
configs=${1:-default,default@cp.async,default@persistent}
echo "== sm_90a GEMM: GPU vs cpu:sm_90a and the double reference; non-square shapes vs cuBLAS"
host_check "bench/gemm_hopper_check.lua full $configs" "$out/gemm_hopper_check.log" cat \
  $lua bench/gemm_hopper_check.lua full "$configs"
sched=${SCHED_CONFIGS:-default@cl2,default@cln2,default@sk2,default@cl2@sk2}
echo "== clusters and split-K: GPU vs cpu:sm_90a and the double reference"
host_check "bench/gemm_hopper_check.lua full $sched" "$out/gemm_hopper_check_sched.log" "grep -E 'NO|FAILED|passed'" \
  $lua bench/gemm_hopper_check.lua full "$sched"
kb=${KB_CONFIGS:-192x176x64/384/4@cln2,128x208x64/256/4}
echo "== tiles of K-major B only: GPU vs cpu:sm_90a and the double reference (kk, mk)"
host_check "bench/gemm_hopper_check.lua full $kb kk,mk" "$out/gemm_hopper_check_kb.log" "grep -E 'NO|FAILED|passed'" \
  $lua bench/gemm_hopper_check.lua full "$kb" kk,mk
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for c in ${SAN_CONFIGS:-default default@cp.async default@cl2@sk2}; do for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool (small problem, configuration $c)"
  log="$out/sanitizer_${tool}_$(echo "$c" | tr -c 'a-z0-9\n' '_').log"
  host_check "compute-sanitizer --tool $tool, $c" "$log" "tail -3" \
    "$san" --tool "$tool" --error-exitcode 3 $lua bench/gemm_hopper_check.lua small "$c"
done; done
echo "== sm_90a GEMM: TFLOP/s against cuBLAS"
host_check "bench/gemm.lua sm_90a" "$out/gemm_sm90a.log" "grep -v '^ckt vs\|^cuBLAS vs'" \
  $lua bench/gemm.lua sm_90a "$out/gemm_h100_sm90a.json" "$configs" "${2:-2048,4096,8192}" "${3:-kk,kn,mk,mn}"
host_finish
