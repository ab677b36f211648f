#!/usr/bin/env bash
# ckt — set up, build and run. The README's two quick-start commands:
#   ./build.sh demo    install what is missing, build, run scripts/tour.lua
#   ./build.sh test    install what is missing, build, run the whole test suite
# Other verbs: deps (install only), build (build only), sanitize (ASan+UBSan tests), fuzz (long fuzz runs).
set -euo pipefail
cd "$(dirname "$0")"
verb=${1:-demo}
jobs=$(nproc 2>/dev/null || echo 2)

# Debian 12 packages ckt needs (see README, "Dependencies").
PKGS=(build-essential cmake pkg-config git
      liblua5.4-dev lua5.4 lua-busted libreadline-dev libcmocka-dev
      libamdhip64-5 libamdhip64-dev llvm-14 clang libclang-rt-14-dev clang-format-14 valgrind tmux luarocks)

deps() {
  local missing=()
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "ckt: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() { # build DIR [cmake args...]  (warnings are errors here; a plain cmake build keeps them warnings)
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCKT_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

case "$verb" in
  deps) deps ;;
  build) deps; build build ;;
  demo) deps; build build; ./build/ckt-lua scripts/tour.lua ;;
  test)
    deps
    # 1. the regular build: unit, Lua specs, scripts, CLI/REPL, embedding, install
    build build
    (cd build && ctest --output-on-failure -j"$jobs" -LE 'gpu|valgrind|fuzz')
    # 1b. Release (-O3) with gcc and with clang: the optimisers warn about what -O2 does not see;
    #     build, then the quick C unit tests
    build build-release -DCMAKE_BUILD_TYPE=Release
    (cd build-release && ctest --output-on-failure -j"$jobs" -L unit)
    CC=clang build build-release-clang -DCMAKE_BUILD_TYPE=Release
    (cd build-release-clang && ctest --output-on-failure -j"$jobs" -L unit)
    # 2. the C tests under valgrind's memcheck
    (cd build && ctest --output-on-failure -j"$jobs" -L valgrind)
    # 3. ASan + UBSan build: the C, CLI and embedding tests (incl. the sandboxed API fuzzer)
    build build-asan -DCKT_SANITIZE=ON
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" -L 'unit|embed|cli')
    # 4. a short libFuzzer run of every target (clang)
    CC=clang build build-fuzz -DCKT_FUZZ=ON -DCKT_FUZZ_SECONDS="${CKT_FUZZ_SECONDS:-25}"
    (cd build-fuzz && ctest --output-on-failure -j"$jobs" -L fuzz)
    ;;
  fuzz) # long runs: CKT_FUZZ_SECONDS=600 ./build.sh fuzz
    deps
    CC=clang build build-fuzz -DCKT_FUZZ=ON -DCKT_FUZZ_SECONDS="${CKT_FUZZ_SECONDS:-600}"
    (cd build-fuzz && ctest --output-on-failure -j"$jobs" -L fuzz)
    ;;
  sanitize) deps; build build-asan -DCKT_SANITIZE=ON; (cd build-asan && ctest --output-on-failure -j"$jobs" -L 'unit|embed|cli') ;;
  *) echo "usage: $0 demo|test|deps|build|sanitize|fuzz" >&2; exit 2 ;;
esac
