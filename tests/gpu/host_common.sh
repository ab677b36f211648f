# Sourced by the tests/gpu/*_on_gpu_host.sh scripts on the offline NVIDIA GPU host: where the
# results go ($OUT), the build of ckt with the carried Lua packages, the LDS bank model's
# predictions next to ncu's shared-memory wavefront counts (compared by ncu_banks.py), and the
# bookkeeping that makes a script exit non-zero when any of its checks failed.
#
# Every check a script runs goes through host_check (or records itself with host_fail); the script
# ends with `host_finish`, which lists the failed checks and returns 1 if there are any. On this
# host a skip is a failure too: a test or bench that exits 77 ("SKIPPED": no GPU, no compiler)
# means the host is not what the numbers claim.
set -o pipefail
out=${OUT:-/tmp/ckt-gpu-out}
build=${CKT_GPU_BUILD:-/tmp/ckt-build} # (another directory: for a second tree, or a simulation)
lua=$build/ckt-lua
gpu_dir=$(dirname "${BASH_SOURCE[0]}")
mkdir -p "$out"
export CKT_CACHE_DIR=/tmp/ckt-cache
host_failed=()

# host_fail WHAT: record a failed check
host_fail() {
  host_failed+=("$1")
  echo "FAILED: $1" >&2
}

# host_check NAME LOG FILTER CMD...: run CMD; its output (stdout and stderr) is kept in LOG and
# shown through the shell command FILTER ("cat" for all of it; FILTER must read to the end, as
# cat, tail and grep do, or tee and CMD would die of SIGPIPE). CMD's own exit status decides
# (not FILTER's or tee's): non-zero, 77 included, is recorded as a failed check and returned.
host_check() {
  local name=$1 log=$2 filter=$3 st
  shift 3
  "$@" 2>&1 | tee "$log" | bash -c "$filter"
  st=${PIPESTATUS[0]}
  [ "$st" -eq 0 ] || host_fail "$name (exit status $st; $log)"
  return "$st"
}

# host_finish: the summary; returns 1 when any check failed, else 0
host_finish() {
  if [ "${#host_failed[@]}" -gt 0 ]; then
    echo "== ${#host_failed[@]} check(s) FAILED:"
    printf '   %s\n' "${host_failed[@]}"
    return 1
  fi
  echo "== all checks passed"
  return 0
}

# host_build [always]: configure (always, or when the build lacks ckt-lua or the cuBLAS bench
# module), then build, showing only errors and warnings (the whole log: $out/build.log). A failed
# configure or build returns 1: the scripts must not go on to test a stale binary.
host_build() {
  if [ "${1:-}" = always ] || [ ! -x "$lua" ] || [ ! -f "$build/ckt_cublas.so" ]; then
    local args
    args=$(bash tools/offline-lua.sh unpack .deps) || { host_fail "unpacking the Lua packages"; return 1; }
    cmake -S . -B "$build" $args -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/configure.log" 2>&1 ||
      { cat "$out/configure.log"; host_fail "configure ($out/configure.log)"; return 1; }
  fi
  local st
  cmake --build "$build" -j16 >"$out/build.log" 2>&1
  st=$?
  grep -E "error|warning" "$out/build.log"
  if [ "$st" -ne 0 ]; then
    tail -20 "$out/build.log"
    host_fail "build (exit status $st; $out/build.log)"
    return 1
  fi
  return 0
}

host_device() {
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader > "$out/device.txt" 2>&1 ||
    { cat "$out/device.txt"; host_fail "nvidia-smi (no GPU?)"; return 1; }
  cat "$out/device.txt"
}

# host_ctest_gpu LOG: the GPU tests (label gpu) of the build; fails when ctest fails, when no test
# is registered, or when any test was skipped (on the GPU host, a skipped GPU test is a failure)
host_ctest_gpu() {
  local log=$1
  # the HIP runtime's GPU test needs an AMD GPU: this host is NVIDIA, so it is left out by name
  # (it is the only GPU test that may not run here), not accepted as a skip
  host_check "ctest -L gpu" "$log" "tail -40" bash -c "cd '$build' && ctest -L gpu -E '^gpu\.runtime_hip$' --no-tests=error --output-on-failure" || return 1
  if grep -q "(Skipped)" "$log"; then
    host_fail "ctest -L gpu: tests SKIPPED on the GPU host: $(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$log" | tr '\n' ' ')"
    return 1
  fi
}

# ncu_wavefronts PREFIX SCRIPT ARGS...: the script's predicted wavefronts ($out/PREFIX_pred.txt),
# then the same launches under ncu ($out/PREFIX_ncu.csv, $out/PREFIX_ncu.err). Either failing is
# recorded as a failed check (and returns 1).
ncu_wavefronts() {
  local prefix=$1 ncu
  shift
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  $lua "$@" > "$out/${prefix}_pred.txt" 2>&1 ||
    { tail -5 "$out/${prefix}_pred.txt"; host_fail "bank predictions: $* ($out/${prefix}_pred.txt)"; return 1; }
  "$ncu" --csv --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum \
    $lua "$@" > "$out/${prefix}_ncu.csv" 2> "$out/${prefix}_ncu.err" ||
    { tail -5 "$out/${prefix}_ncu.err"; host_fail "ncu: $* ($out/${prefix}_ncu.err)"; return 1; }
}
