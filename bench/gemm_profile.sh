#!/usr/bin/env bash
# Where the library GEMM's time goes on the NVIDIA GPU host: the SASS of one configuration
# (instruction histogram of the whole kernel, registers) and ncu's scheduler and warp-stall
# sections for one launch at 4096^3 inside bench/gemm.lua. Output in $OUT/profile_<config>.
#   bash bench/gemm_profile.sh "128x128x32/128/4" [kk] [f16]
set -u
cfg=${1:-128x128x32/128/4}; mj=${2:-kk}; dt=${3:-f16}
out=${OUT:-/tmp/ckt-gpu-out}/profile_$(echo "$cfg" | tr '/x' '__')_$mj
mkdir -p "$out"
if [ ! -x /tmp/ckt-build/ckt-lua ]; then
  args=$(bash tools/offline-lua.sh unpack .deps) || exit 1
  cmake -S . -B /tmp/ckt-build $args -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
fi
cmake --build /tmp/ckt-build -j16 2>&1 | grep -E "error:|warning:"
lua=/tmp/ckt-build/ckt-lua
export CKT_CACHE_DIR=/tmp/ckt-cache CKT_BENCH_LIB=/tmp/ckt-build
cat > "$out/source.lua" <<'LUA'
local gemm = require "ckt.kernels.gemm"
local tm, tn, tk, block, stages = (arg[1]):match("^(%d+)x(%d+)x(%d+)/(%d+)/(%d+)")
local k = gemm.build{dtype = arg[3], a_major = arg[2]:sub(1, 1), b_major = arg[2]:sub(2, 2), target = "sm_90",
  tile = {tonumber(tm), tonumber(tn), tonumber(tk)}, block = tonumber(block), stages = tonumber(stages)}
io.write(k:source("sm_90"))
LUA
$lua "$out/source.lua" "$cfg" "$mj" "$dt" > "$out/kernel.cu" 2>&1 || { cat "$out/kernel.cu"; exit 1; }
( cd "$out" && nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o kernel.cubin kernel.cu 2> ptxas.txt; cat ptxas.txt | grep -E "registers|spill" ;
  cuobjdump -sass kernel.cubin > kernel.sass
  echo "SASS instructions (whole kernel): $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' kernel.sass)"
  grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_.]+' kernel.sass | awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 )
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --kernel-name "regex:gemm_${dt}_${mj}" --launch-skip 12 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis \
  $lua bench/gemm.lua sm_90 "$out/g.json" "$cfg" 4096 "$mj" > "$out/ncu.txt" 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Stall|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Bank" "$out/ncu.txt" | head -40
grep -E "^\s+(OPT|WRN|INF)" -A3 "$out/ncu.txt" | head -60
