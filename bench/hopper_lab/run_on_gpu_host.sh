#!/usr/bin/env bash
# The Hopper lab on the offline GPU host: build ckt, generate the library's sm_90a GEMM (the
# default and persistent = true), write the variants (variants.py), build lab.c and run them all.
# Output: $OUT/hopper_lab.txt (the sources and the binary in /tmp/ckt-hopper-lab/).
# LAB_ARCH=sm_90: the mma.sync GEMM and its variants (sync_variants.py) instead.
#   bash bench/hopper_lab/run_on_gpu_host.sh
set -u
cd "$(dirname "$0")/../.."
. tests/gpu/host_common.sh
host_build || exit 1
dir=/tmp/ckt-hopper-lab
mkdir -p "$dir"
$lua bench/hopper_lab/gen.lua "$dir/gen_default.cu" "$dir/gen_persistent.cu" "$dir/a_sync_default.cu" || exit 1
if [ "${LAB_ARCH:-}" = sm_90 ]; then
  python3 bench/hopper_lab/sync_variants.py "$dir/a_sync_default.cu" "$dir/b_sync_carried.cu" || exit 1
  files="a_sync_default.cu b_sync_carried.cu a_sync_default.cu b_sync_carried.cu"
else
  files=$(python3 bench/hopper_lab/variants.py "$dir/gen_default.cu" "$dir/gen_persistent.cu" "$dir" ${LAB_VARIANTS:+"$LAB_VARIANTS"}) || exit 1
fi
cc -O2 -Wall -I/usr/local/cuda/include bench/hopper_lab/lab.c -o "$dir/lab" -L/usr/local/cuda/lib64 \
  -Wl,-rpath,/usr/local/cuda/lib64 -lcuda -lnvrtc -lm || exit 1
(cd "$dir" && ./lab $files) 2>&1 | tee "$out/hopper_lab.txt"
