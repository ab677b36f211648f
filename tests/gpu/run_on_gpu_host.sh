#!/usr/bin/env bash
# On the offline NVIDIA GPU host: build ckt with the carried Lua packages, run the GPU tests and
# the benchmarks that need the GPU host's compilers, and leave the results in $OUT.
set -u
out=${OUT:-/tmp/ckt-gpu-out}
mkdir -p "$out"
args=$(bash tools/offline-lua.sh unpack .deps) || exit 1
cmake -S . -B /tmp/ckt-build $args -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
cmake --build /tmp/ckt-build -j16 2>&1 | grep -E "error|warning" ; 
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "== GPU tests (label gpu)"
(cd /tmp/ckt-build && ctest -L gpu -V 2>&1) | tee "$out/gpu_tests.log"
echo "== JIT latency on the GPU host"
/tmp/ckt-build/ckt-lua bench/jit_latency.lua 2>&1 | tee "$out/jit_latency.log"
cp bench/results/jit_latency.json "$out/jit_latency_gpu_host.json" 2>/dev/null
true
