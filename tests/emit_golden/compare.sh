#!/bin/sh
# Compare two dumps of tests/emit_golden/dump.lua: the generated sources must be byte-identical
# but for the script line numbers in comments ("/* line 455: ..."), which move when kernels/ is
# edited. Prints the differing files (with a diff of the first) and exits 1 on any difference.
# Usage: compare.sh BEFORE_DIR AFTER_DIR
set -eu
a=$1 b=$2
norm() { sed -E 's/(line |line=)[0-9]+/\1N/g' "$1"; }
status=0 shown=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$a"/* "$b"/*; do
    n=$(basename "$f")
    [ -e "$a/$n" ] && [ -e "$b/$n" ] || { echo "only in one dump: $n"; status=1; continue; }
done
for f in "$a"/*; do
    n=$(basename "$f")
    [ -e "$b/$n" ] || continue
    norm "$a/$n" > "$tmp/a"
    norm "$b/$n" > "$tmp/b"
    if ! cmp -s "$tmp/a" "$tmp/b"; then
        echo "differs: $n"
        [ $shown -eq 1 ] || diff "$tmp/a" "$tmp/b" | head -20 || true
        shown=1 status=1
    fi
done
[ $status -eq 0 ] && echo "identical: $(ls "$a" | wc -l) files"
exit $status
