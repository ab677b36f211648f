#!/usr/bin/env bash
# Cold NVRTC compiles of two trees' generated sources (bench/jit_sources.lua into A_DIR and
# B_DIR), each kernel's pair compiled alternately in one process (bench/nvrtc_ab.c): what a change
# to the emitter or to the options costs, with the machine's drift shared by both sides.
#   bash bench/jit_ab.sh A_DIR B_DIR [reps=11] ["A's extra options"] ["B's extra options"]
# e.g. B's extra options "--minimal" to price NVRTC's --minimal with it.
set -eu
a=$1 b=$2 reps=${3:-11} xa=${4:-} xb=${5:-}
ab=${TMPDIR:-/tmp}/nvrtc_ab
cc -O2 -o "$ab" "$(dirname "$0")/nvrtc_ab.c" -ldl
base="--std=c++17 -default-device --ptxas-options=-v"
for f in "$a"/*.cu; do
  k=$(basename "$f" .cu)
  arch=$(echo "$k" | sed -n 's/.*_\(sm_[0-9]*a\{0,1\}\)_.*/\1/p')
  light=""
  case $k in transpose*) light="--Ofast-compile=min" ;; esac # (the level ckt gives kernels that only move data)
  echo "$k: $("$ab" "$reps" "$f" "-arch=$arch $base $light $xa" "$b/$k.cu" "-arch=$arch $base $light $xb")"
done
