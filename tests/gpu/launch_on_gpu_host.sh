#!/usr/bin/env bash
# On the offline NVIDIA GPU host: the launch issue's checks and benchmarks. Builds ckt, runs the
# GPU tests (label gpu), the stream checks (tests/gpu/streams.lua) on sm_90 and sm_90a, the same
# under compute-sanitizer, then the launch benchmarks: bench_launch (C: the host cost of a
# launch beside a bare cuLaunchKernel), bench/launch.lua (Lua: host cost, the library GEMM in an
# application loop against cuBLAS, a chain), bench/launch_torch.py (torch's loop and chain), and
# bench/gemm.lua / bench/kernels.lua with their wall-clock columns. Results land in $OUT; exits
# non-zero when any check failed.
#   tests/gpu/launch_on_gpu_host.sh [quick]   quick: the checks and bench_launch / launch.lua only
set -u
. "$(dirname "$0")/host_common.sh"
mode=${1:-full}
host_build always || { host_finish; exit 1; }
host_device || { host_finish; exit 1; }
echo "== GPU tests (label gpu)"
host_ctest_gpu "$out/gpu_tests.log"
echo "== streams: ordering, asynchronous == waited, graphs, buffers closed in flight"
host_check "streams sm_90" "$out/streams_sm90.log" cat $lua tests/gpu/streams.lua sm_90 sm_90 1024
host_check "streams sm_90a" "$out/streams_sm90a.log" cat $lua tests/gpu/streams.lua sm_90a sm_90a 1024
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
host_check "compute-sanitizer streams sm_90a" "$out/streams_sanitizer.log" "tail -5" \
  "$sanitizer" --error-exitcode 9 $lua tests/gpu/streams.lua sm_90a sm_90a 256
echo "== the host cost of a launch (C)"
host_check "bench_launch sm_90" "$out/bench_launch_c.log" cat "$build/bench_launch" sm_90 10000 "$out/launch_c_h100.json"
echo "== launches as an application sees them (Lua)"
CKT_BENCH_LIB=$build host_check "bench/launch.lua" "$out/launch.log" cat \
  $lua bench/launch.lua sm_90 "$out/launch_h100.json" sm_90,sm_90a 1024,4096,8192 f16,bf16 hints
host_check "bench/launch_torch.py" "$out/launch_torch.log" cat python3 bench/launch_torch.py 1024,4096,8192 "$out/launch_torch_h100.json"
if [ "$mode" != quick ]; then
  echo "== GEMM against cuBLAS with the wall-clock column"
  for t in sm_90a sm_90; do
    CKT_BENCH_LIB=$build host_check "bench/gemm.lua $t" "$out/gemm_$t.log" "tail -12" \
      $lua bench/gemm.lua $t "$out/gemm_${t}_h100.json" default 4096,8192 kk
  done
  echo "== kernel bandwidth with the wall-clock column"
  host_check "bench/kernels.lua sm_90" "$out/kernels.log" "tail -14" $lua bench/kernels.lua sm_90 "$out/kernels_h100.json"
fi
host_finish
