#!/usr/bin/env bash
# The C sources in the repository's style (.clang-format, clang-format 14): engine/, bindings/,
# examples/, tests/unit/ and bench/*.c. Generated device source and the kernel preludes are not
# formatted (the emitter writes its own layout).
#   tools/format.sh            rewrite the files in place
#   tools/format.sh --check    change nothing; list what differs and exit 1 if anything does
#                              (what the ctest style.clang_format runs)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cf=${CLANG_FORMAT:-clang-format-14}
command -v "$cf" >/dev/null || { echo "format.sh: $cf not found (apt-get install clang-format-14, or set CLANG_FORMAT)" >&2; exit 2; }
cd "$root"
mapfile -t files < <({ find engine bindings examples tests/unit -type f \( -name '*.c' -o -name '*.h' \); ls bench/*.c; } | LC_ALL=C sort)
if [ "${1:-}" = --check ]; then
  "$cf" --style=file --dry-run --Werror "${files[@]}"
else
  # twice: clang-format 14 is not always idempotent (a long trailing comment is rewrapped once more)
  "$cf" --style=file -i "${files[@]}"
  "$cf" --style=file -i "${files[@]}"
fi
