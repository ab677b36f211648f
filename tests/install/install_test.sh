#!/usr/bin/env bash
# cmake --install into a temporary prefix; build the example host against it two ways; run it.
set -eu
build=$1 src=$2 cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
libdir=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -1 | xargs dirname)
# 1. pkg-config
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists ckt-lua
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs ckt-lua)
"$cc" -std=c17 -o "$tmp/embed_pc" "$src/examples/embed.c" $flags -Wl,-rpath,"$libdir"
out=$("$tmp/embed_pc")
echo "$out" | grep -q "(2,3):(6,1)" || { echo "pkg-config build gave: $out"; exit 1; }
# 2. find_package(ckt)
mkdir -p "$tmp/consumer"
cat > "$tmp/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(ckt REQUIRED)
add_executable(embed_cmake $src/examples/embed.c)
target_link_libraries(embed_cmake PRIVATE ckt::ckt_lua)
CM
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer/build" >/dev/null
out=$("$tmp/consumer/build/embed_cmake")
echo "$out" | grep -q "(2,3):(6,1)" || { echo "find_package build gave: $out"; exit 1; }
# the installed ckt-lua and module work too
"$tmp/prefix/bin/ckt-lua" -e 'assert(tostring(ckt.layout{4,8}) == "(4,8):(1,4)")'
lua5.4 -e "package.cpath='$libdir/lua/5.4/?.so;'..package.cpath; assert(require('ckt').version)"
# the manual page is installed and renders (groff's warnings are errors here)
page="$tmp/prefix/share/man/man1/ckt-lua.1"
[ -f "$page" ] || { echo "ckt-lua.1 not installed in share/man/man1"; exit 1; }
if command -v groff >/dev/null; then
  warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warn" ] || { echo "groff -man warns: $warn"; exit 1; }
fi
if command -v man >/dev/null; then
  out=$(MANWIDTH=80 man -l "$page" 2>/dev/null | col -b 2>/dev/null || true)
  if [ -n "$out" ]; then
    for want in "ckt-lua - Lua 5.4 interpreter" "--target NAME" "-l g=mod" "CKT_PATH"; do
      printf '%s\n' "$out" | grep -qF -- "$want" || { echo "man -l ckt-lua.1 lacks '$want'"; exit 1; }
    done
  fi
fi
echo "1 passed, 0 failed"
