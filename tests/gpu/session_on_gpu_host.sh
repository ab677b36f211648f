#!/usr/bin/env bash
# On the offline NVIDIA GPU host: the launch checks and benches (launch_on_gpu_host.sh quick), then
# the new kernels of the library measured once: the attention forward (bench/attention.lua beside
# torch SDPA's backends, bench/attention_torch.py) and the fp8 GEMM (bench/gemm_fp8.lua). Results
# in $OUT (packed into one results.tar.gz); exits non-zero when any check failed.
set -u
dir=$(dirname "$0")
bash "$dir/launch_on_gpu_host.sh" quick
st=$?
. "$dir/host_common.sh"
[ "$st" -eq 0 ] || host_fail "launch_on_gpu_host.sh quick"
host_check "bench/attention.lua sm_90" "$out/attention.log" cat $lua bench/attention.lua sm_90 "$out/attention_h100.json"
host_check "bench/attention_torch.py" "$out/attention_torch.log" cat python3 bench/attention_torch.py "4,32,4096,128;16,16,1024,64;1,32,16384,128" "$out/attention_torch_h100.json"
host_check "bench/gemm_fp8.lua sm_90a" "$out/gemm_fp8.log" cat $lua bench/gemm_fp8.lua sm_90a "$out/gemm_fp8_h100.json" 4096,8192
if [ -f bench/gemm_batched.lua ]; then
  host_check "bench/gemm_batched.lua" "$out/gemm_batched.log" cat $lua bench/gemm_batched.lua sm_90a "$out/gemm_batched_h100.json"
fi
tar -C "$out" -czf /tmp/results.tar.gz . && rm -rf "${out:?}"/* && mv /tmp/results.tar.gz "$out/"
host_finish
