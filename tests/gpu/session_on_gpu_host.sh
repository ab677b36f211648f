#!/usr/bin/env bash
# On the offline NVIDIA GPU host: the newer kernels measured once, each bench checking its GPU
# results against the double reference (and the CPU target's emulation) before it times:
#   the attention forward (bench/attention.lua beside torch SDPA's backends), the row kernels
#   (bench/rows.lua beside torch, bench/rows_torch.py), the library GEMM against cuBLAS (a
#   regression check at 4096 and 8192), the grouped GEMM where present, and the JIT: cold
#   compiles (bench/jit_kernels.lua), compile throughput on the pool (bench/jit_pool.lua), cache
#   hits and a precompiled library's first launch (bench/jit_latency.lua), ckt-lua --precompile.
# Results in $OUT (packed into one results.tar.gz); exits non-zero when any check failed.
#   bash tests/gpu/session_on_gpu_host.sh [part...]   parts: attention rows gemm grouped jit (all),
#   and on request: odd (the unaligned sm_90a GEMM at K = 4097 against the double reference, beside
#   cuBLAS: tests/gpu/gemm_odd_check.lua), unaligned (sm_90a GEMM with aligned = false and ragged bulk copies against the
#   aligned default), ncu (the attention kernel under Nsight Compute: where its time goes)
set -u
dir=$(dirname "$0")
. "$dir/host_common.sh"
parts=${*:-attention rows gemm grouped jit}
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
host_build || { host_finish; exit 1; }
export CKT_BENCH_LIB=$build
if has attention; then
  host_check "bench/attention.lua sm_90" "$out/attention.log" cat $lua bench/attention.lua sm_90 "$out/attention_h100.json" \
    "4,32,4096,128;16,16,1024,64;1,32,16384,128" "${CKT_ATTENTION_TILES:-default,128x32,128x64}"
  host_check "bench/attention_torch.py" "$out/attention_torch.log" cat python3 bench/attention_torch.py "4,32,4096,128;16,16,1024,64;1,32,16384,128" "$out/attention_torch_h100.json"
fi
if has rows; then
  host_check "bench/rows.lua sm_90 f16" "$out/rows.log" cat $lua bench/rows.lua sm_90 f16 "$out/rows_f16_h100.json"
  host_check "bench/rows_torch.py f16" "$out/rows_torch.log" cat python3 bench/rows_torch.py f16 "$out/rows_torch_f16_h100.json"
fi
if has gemm; then
  for t in sm_90a sm_90; do
    host_check "bench/gemm.lua $t" "$out/gemm_$t.log" "tail -8" $lua bench/gemm.lua $t "$out/gemm_${t}_h100.json" default 4096,8192 kk
  done
fi
if has grouped && [ -f bench/gemm_grouped.lua ]; then
  host_check "bench/gemm_grouped.lua sm_90a" "$out/gemm_grouped.log" cat $lua bench/gemm_grouped.lua sm_90a "$out/gemm_grouped_h100.json" 8,64 \
    "default,128x128x64/256/4,64x256x64/128/4,64x128x64/128/6"
  host_check "bench/gemm_grouped.lua sm_90" "$out/gemm_grouped_sm90.log" cat $lua bench/gemm_grouped.lua sm_90 "$out/gemm_grouped_sm90_h100.json" 8,64
fi
if has unaligned; then
  host_check "bench/gemm.lua sm_90a unaligned 4104" "$out/gemm_unaligned.log" "tail -12" $lua bench/gemm.lua sm_90a "$out/gemm_sm90a_unaligned_h100.json" "default,default@unaligned,default@tma@unaligned" 4104 kk,kn,mk,mn
  host_check "bench/gemm.lua sm_90a unaligned 4097" "$out/gemm_unaligned_odd.log" "tail -6" $lua bench/gemm.lua sm_90a "$out/gemm_sm90a_unaligned_odd_h100.json" "default@unaligned" 4097 kk,mk
fi
if has odd; then
  host_check "gemm_odd_check.lua" "$out/gemm_odd_check.log" cat $lua tests/gpu/gemm_odd_check.lua 192 160 4097
fi
if has ncu; then
  host_check "ncu attention" "$out/attention_ncu.log" "grep -E 'Duration|Throughput|Occupancy|Warp Cycles|Stall|Registers|Shared Memory|ms$|Issue|Eligible|Active Warps|spills'" \
    ncu -k regex:attn -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section SchedulerStats --section LaunchStats $lua tests/gpu/attention_ncu.lua 128 false
fi
if has jit; then
  host_check "bench/jit_kernels.lua" "$out/jit_kernels.log" cat $lua bench/jit_kernels.lua sm_90 sm_90a
  host_check "bench/jit_pool.lua" "$out/jit_pool.log" cat $lua bench/jit_pool.lua sm_90
  host_check "bench/jit_latency.lua" "$out/jit_latency.log" cat $lua bench/jit_latency.lua sm_90 cpu
  CKT_CACHE_DIR=$(mktemp -d) host_check "ckt-lua --precompile" "$out/precompile.log" "tail -6" \
    bash -c "time $lua --precompile sm_90 sm_90a"
fi
tar -C "$out" -czf /tmp/results.tar.gz . && rm -rf "${out:?}"/* && mv /tmp/results.tar.gz "$out/"
host_finish
