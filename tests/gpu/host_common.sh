# Sourced by run_on_gpu_host.sh and gemm_on_gpu_host.sh on the offline NVIDIA GPU host: where the
# results go ($OUT), the build of ckt with the carried Lua packages, and the LDS bank model's
# predictions next to ncu's shared-memory wavefront counts (compared by ncu_banks.py).
out=${OUT:-/tmp/ckt-gpu-out}
build=/tmp/ckt-build
lua=$build/ckt-lua
gpu_dir=$(dirname "${BASH_SOURCE[0]}")
mkdir -p "$out"
export CKT_CACHE_DIR=/tmp/ckt-cache

# host_build [always]: configure (always, or when the build lacks ckt-lua or the cuBLAS bench
# module), then build, showing only errors and warnings.
host_build() {
  if [ "${1:-}" = always ] || [ ! -x "$lua" ] || [ ! -f "$build/ckt_cublas.so" ]; then
    local args
    args=$(bash tools/offline-lua.sh unpack .deps) || return 1
    cmake -S . -B "$build" $args -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || return 1
  fi
  cmake --build "$build" -j16 2>&1 | grep -E "error|warning"
  return 0
}

host_device() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"; }

# ncu_wavefronts PREFIX SCRIPT ARGS...: the script's predicted wavefronts ($out/PREFIX_pred.txt),
# then the same launches under ncu ($out/PREFIX_ncu.csv, $out/PREFIX_ncu.err).
ncu_wavefronts() {
  local prefix=$1 ncu
  shift
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  $lua "$@" > "$out/${prefix}_pred.txt" 2>&1
  "$ncu" --csv --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
    $lua "$@" > "$out/${prefix}_ncu.csv" 2> "$out/${prefix}_ncu.err"
}
