#!/usr/bin/env bash
# `luarocks make` (Debian's luarocks) of a copy of the source tree into a local rocks tree, then
# the stock lua5.4 requires ckt and the kernel library from that tree, and ckt-lua runs from it.
# usage: luarocks_make.sh SOURCE_DIR          exit 77 (skipped) without luarocks or lua5.4
set -eu
src=${1:?usage: $0 SOURCE_DIR}
command -v luarocks >/dev/null || { echo "SKIPPED: luarocks not installed"; exit 77; }
command -v lua5.4 >/dev/null || { echo "SKIPPED: lua5.4 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a clean copy, as a clone would be: the tracked (and not ignored) files only
mkdir "$tmp/src"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tmp/src" 2>/dev/null) || true
else
  (cd "$src" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -C "$tmp/src" -xf -
fi
[ -f "$tmp/src/ckt-scm-1.rockspec" ] || { echo "no ckt-scm-1.rockspec in $src"; exit 1; }
tree="$tmp/rocks"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}
(cd "$tmp/src" && luarocks --lua-version 5.4 make --tree="$tree" ckt-scm-1.rockspec) > "$tmp/make.log" 2>&1 ||
  { tail -40 "$tmp/make.log"; echo "luarocks make failed"; exit 1; }
luarocks --lua-version 5.4 --tree="$tree" list 2>/dev/null | grep -q '^ckt$' || { echo "ckt is not listed in the tree"; exit 1; }
# the module from the tree's paths only (no build tree, no source tree on them)
eval "$(luarocks --lua-version 5.4 --tree="$tree" path)"
out=$(cd "$tmp" && lua5.4 -e '
  local ckt = require "ckt"
  assert(package.searchpath("ckt", package.cpath):find("'"$tree"'", 1, true), "ckt.so is not the tree'"'"'s")
  assert(tostring(ckt.composition(ckt.layout"(4,3):(3,1)", ckt.layout"6:2")) == "(2,3):(6,1)")
  local copy = require "ckt.kernels.copy"
  assert(type(copy) == "table", "the kernel library is not in the module")
  print("ckt " .. ckt.version .. " from the tree")')
echo "$out"
echo "$out" | grep -q "from the tree" || exit 1
"$tree/bin/ckt-lua" -e 'assert(tostring(ckt.layout{4,8}) == "(4,8):(1,4)")'
[ -f "$tree"/lib/luarocks/rocks-5.4/ckt/scm-1/share/ckt/kernels/copy.lua ] || { echo "kernel sources not installed with the rock"; exit 1; }
echo "1 passed, 0 failed"
