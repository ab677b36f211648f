#!/usr/bin/env bash
# ckt-lua behaves like the standard lua program: exit codes, messages, arg, -e, -l, -, -v, -h.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # name, expected rc, regex that must be in stdout+stderr, command...
  local name=$1 want=$2 re=$3; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ] && printf '%s' "$out" | grep -Eq -- "$re"; then pass=$((pass+1))
  else fail=$((fail+1)); echo "FAIL $name: rc=$rc (want $want), output:"; printf '%s\n' "$out" | head -20; fi
}
cat > "$tmp/good.lua" <<'LUA'
print("good", #arg, arg[0]:match("good.lua") ~= nil, arg[1], arg[2], arg[-1] ~= nil)
print(tostring(ckt.layout{4,8}))
LUA
printf 'local x = 1\nx = = 2\n' > "$tmp/syntax.lua"
printf 'local t = nil\nlocal function f() return t.field end\nf()\n' > "$tmp/runtime.lua"
printf 'return {answer = 42}\n' > "$tmp/mymod.lua"
check good-script 0 'good	2	true	a	b	true' "$bin" "$tmp/good.lua" a b
check layout-global 0 '\(4,8\):\(1,4\)' "$bin" "$tmp/good.lua"
check syntax-error 1 'syntax.lua:2: unexpected symbol' "$bin" "$tmp/syntax.lua"
check runtime-error 1 'runtime.lua:2: attempt to index a nil value' "$bin" "$tmp/runtime.lua"
check runtime-traceback 1 'stack traceback:' "$bin" "$tmp/runtime.lua"
check missing-file 1 'cannot open .*nope.lua: No such file' "$bin" "$tmp/nope.lua"
check dash-e 0 '^3$' "$bin" -e 'print(1+2)'
check dash-e-error 1 'command line' "$bin" -e 'error("boom")'
check dash-e-missing 1 "needs argument" "$bin" -e
check dash-l 0 '^42$' env LUA_PATH="$tmp/?.lua" "$bin" -l mymod -e 'print(mymod.answer)'
check dash-l-missing 1 "module 'nosuchmod' not found" "$bin" -l nosuchmod
check stdin 0 '^stdin.7$' sh -c "echo 'print(\"stdin\", 3+4)' | '$bin' -"
check version 0 'ckt [0-9]+\.[0-9]+\.[0-9]+ \(Lua 5\.4' "$bin" -v
check help 0 'usage: .*\[options\] \[script \[args\]\]' "$bin" -h
check unknown-option 1 "unrecognized option '--bogus'" "$bin" --bogus
check target 0 '^sm_90$' "$bin" --target sm_90 -e 'print(ckt.default_target())'
check target-empty 1 'empty' "$bin" --target '' -e 'print(1)'
check repl-pipe 0 '\(2,2\):\(1,2\)' sh -c "printf 'ckt.layout{2,2}\n' | '$bin'"
check repl-multiline 0 '42' sh -c "printf 'function f(a)\nreturn a * 2\nend\nf(21)\n' | '$bin'"
check repl-error-continues 0 'after' sh -c "printf 'error(\"x\")\nprint(\"after\")\n' | '$bin'"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
