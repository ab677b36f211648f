#!/usr/bin/env bash
# The sm_90a library GEMM (wgmma through shared-memory descriptors) on the offline H100/H200
# host, in one call: build ckt and the cuBLAS bench module; bench/gemm_hopper_check.lua (GPU vs
# the CPU target cpu:sm_90a and the double reference, every dtype, major and configuration, then
# non-square shapes against cuBLAS); compute-sanitizer memcheck and racecheck on a small problem
# (the default, bulk tensor copies, and copy = "cp.async", or the configurations in $SAN_CONFIGS);
# bench/gemm.lua on sm_90a (TFLOP/s against cuBLAS at the square sizes, cold NVRTC times). Logs
# land in $OUT.
#   bash tests/gpu/gemm_hopper_on_gpu_host.sh [configs] [sizes] [majors]   (see bench/gemm.lua)
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
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee "$out/device.txt"
configs=${1:-default,default@cp.async,default@persistent}
rc=0
echo "== sm_90a GEMM: GPU vs cpu:sm_90a and the double reference; non-square shapes vs cuBLAS"
$lua bench/gemm_hopper_check.lua full "$configs" 2>&1 | tee "$out/gemm_hopper_check.log" || rc=1
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for c in ${SAN_CONFIGS:-default default@cp.async}; do for tool in memcheck racecheck; do
  echo "== compute-sanitizer --tool $tool (small problem, configuration $c)"
  log="$out/sanitizer_${tool}_$(echo "$c" | tr -c 'a-z0-9\n' '_').log"
  "$san" --tool "$tool" --error-exitcode 3 $lua bench/gemm_hopper_check.lua small "$c" > "$log" 2>&1 || rc=1
  tail -3 "$log"
done; done
echo "== sm_90a GEMM: TFLOP/s against cuBLAS"
$lua bench/gemm.lua sm_90a "$out/gemm_h100_sm90a.json" "$configs" "${2:-2048,4096,8192}" "${3:-kk,kn,mk,mn}" 2>&1 | tee "$out/gemm_sm90a.log" | grep -v "^ckt vs\|^cuBLAS vs"
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
exit $rc
