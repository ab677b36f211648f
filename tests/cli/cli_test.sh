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
  if [ "$rc" -eq "$want" ] && printf '%s\n' "$out" | grep -Eq -- "$re"; then pass=$((pass+1))
  else fail=$((fail+1)); echo "FAIL $name: rc=$rc (want $want), output:"; printf '%s\n' "$out" | head -20; fi
}
exact() { # name, expected rc, expected output with lines joined by '|', command...
  local name=$1 want=$2 text=$3; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  out=$(printf '%s' "$out" | tr '\n' '|')
  if [ "$rc" -eq "$want" ] && [ "$out" = "$text" ]; then pass=$((pass+1))
  else fail=$((fail+1)); echo "FAIL $name: rc=$rc (want $want), output '$out', want '$text'"; fi
}
cat > "$tmp/good.lua" <<'LUA'
print("good", #arg, arg[0]:match("good.lua") ~= nil, arg[1], arg[2], arg[-1] ~= nil)
print(tostring(ckt.layout{4,8}))
LUA
printf 'local x = 1\nx = = 2\n' > "$tmp/syntax.lua"
printf 'local t = nil\nlocal function f() return t.field end\nf()\n' > "$tmp/runtime.lua"
printf 'return {answer = 42}\n' > "$tmp/mymod.lua"
printf 'x = 3\n' > "$tmp/setx.lua"
printf 'error("broken")\n' > "$tmp/bad.lua"
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
# --help lists lua5.4's options plus ckt's, each on its own line
for opt in '-e stat' '-i ' '-l mod ' '-l g=mod' '-v ' '-E ' '-W ' '-h, --help' '--target NAME' '-- ' '- '; do
  check "help-lists${opt// /_}" 0 "^  ${opt}" "$bin" --help
done
check help-targets 0 'cpu, gfx908.*sm_90' "$bin" --help
check help-man 0 'ckt-lua\(1\)' "$bin" --help
check dash-l-global-nil 0 '^42	nil$' env LUA_PATH="$tmp/?.lua" "$bin" -l m=mymod -e 'print(m.answer, mymod)'
check dash-W 0 'Lua warning: loud' "$bin" -W -e 'warn("loud")'
exact warnings-off 0 "" "$bin" -e 'warn("quiet")'
check dash-E 0 "^false	module 'mymod' not found" env LUA_PATH="$tmp/?.lua" CKT_PATH="$tmp" "$bin" -E -e 'print(pcall(require, "mymod"))'
check no-dash-E 0 '^true' env LUA_PATH="$tmp/?.lua" "$bin" -e 'print(pcall(require, "mymod"))'
check unknown-option 1 "unrecognized option '--bogus'" "$bin" --bogus
check target 0 '^sm_90$' "$bin" --target sm_90 -e 'print(ckt.default_target())'
check target-empty 1 'empty' "$bin" --target '' -e 'print(1)'
check repl-pipe 0 '\(2,2\):\(1,2\)' sh -c "printf 'ckt.layout{2,2}\n' | '$bin'"
check repl-multiline 0 '42' sh -c "printf 'function f(a)\nreturn a * 2\nend\nf(21)\n' | '$bin'"
check repl-error-continues 0 'after' sh -c "printf 'error(\"x\")\nprint(\"after\")\n' | '$bin'"
# arg like lua: options at negative indices, the script at 0, its arguments from 1
printf 'print(arg[-3], arg[-2], arg[-1], arg[0]:match("[^/]*$"), arg[1], #arg)\n' > "$tmp/args.lua"
check arg-negative 0 "ckt-lua	-e	x=1	args.lua	p	1" "$bin" -e x=1 "$tmp/args.lua" p
check arg-dashdash 0 "^-e	x=1	--	args.lua	-v	1$" "$bin" -e x=1 -- "$tmp/args.lua" -v
check script-args-not-options 0 "ckt-lua	-e	x=1	args.lua	-h	1$" "$bin" -e x=1 "$tmp/args.lua" -h
check dash-i-after-script 0 "> 9" sh -c "printf 'x * 3\n' | '$bin' -i '$tmp/setx.lua'"
exact e-runs-before-script 0 "first|good	0	true	nil	nil	true|(4,8):(1,4)" "$bin" -e 'print("first")' "$tmp/good.lua"
exact options-in-order 0 "1|2|3" "$bin" -e 'print(1)' -e 'print(2)' -e 'print(3)'
exact e-error-stops 1 "$bin: (command line):1: stop|stack traceback:|	[C]: in function 'error'|	(command line):1: in main chunk" "$bin" -e 'error("stop")' "$tmp/good.lua"
exact version-and-script 0 "$("$bin" -v)|good	0	true	nil	nil	true|(4,8):(1,4)" "$bin" -v "$tmp/good.lua"
exact os-exit-status 3 "" "$bin" -e 'os.exit(3)'
check script-returns-error-object 1 'error object is a table value' "$bin" -e 'error({})'
check target-unknown 1 "--target: target: unknown target .nosuch.; known: cpu, gfx908" "$bin" --target nosuch -e 'print(1)'
check target-missing 1 "'--target' needs argument" "$bin" --target
check target-newer-gfx 0 '^gfx1100$' "$bin" --target gfx1100 -e 'print(ckt.default_target())'
check target-cpu-gpu 0 '^cpu:gfx90a$' "$bin" --target cpu:gfx90a -e 'print(ckt.default_target())'
check target-cpu-unknown 1 "unknown target 'cpu:gfx1'" "$bin" --target cpu:gfx1 -e 'print(1)'
check target-bad-shape 1 "unknown target 'sm_9x'" "$bin" --target sm_9x -e 'print(1)'
check syntax-e 1 'command line.:1:' "$bin" -e 'x ='
# the kernel library and $CKT_PATH are on package.path
mkdir -p "$tmp/p1" "$tmp/p2/pk"
echo 'return {x = "one"}' > "$tmp/p1/m1.lua"
echo 'return {x = "pk"}' > "$tmp/p2/pk/init.lua"
check ckt-path 0 '^one	pk$' env CKT_PATH="$tmp/p1:$tmp/p2" "$bin" -e 'print(require("m1").x, require("pk").x)'
check kernel-path 0 '^true	true$' "$bin" -e 'print(package.path:find("/kernels/?.lua", 1, true) ~= nil, package.path:find("share/ckt/kernels", 1, true) ~= nil)'
printf '#!/usr/bin/env ckt-lua\nprint("shebang", ckt ~= nil)\n' > "$tmp/shebang.lua"
check shebang-line 0 '^shebang	true$' "$bin" "$tmp/shebang.lua"
check directory 1 'cannot read .*' "$bin" "$tmp"
check error-in-l-module 1 'bad.lua:1: broken' env LUA_PATH="$tmp/?.lua" "$bin" -l bad
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
