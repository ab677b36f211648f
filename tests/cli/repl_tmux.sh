#!/usr/bin/env bash
# The REPL as a person uses it, through tmux: expressions, tab completion, multi-line input,
# Ctrl-C during a running statement, history across sessions, Ctrl-D to quit.
set -u
bin=$1
command -v tmux >/dev/null || { echo "SKIPPED: tmux is not installed"; exit 77; }
tmp=$(mktemp -d)
sock="$tmp/sock"
export CKT_HISTORY="$tmp/history"
t() { tmux -S "$sock" "$@"; }
trap 't kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0 pass=0
screen() { t capture-pane -p -t repl; }
wait_for() { # regex, seconds
  for _ in $(seq 1 $(( $2 * 10 ))); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
  return 1
}
expect() { if wait_for "$2" 5; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $1: no /$2/ on screen:"; screen; fi; }
start() { t new-session -d -s repl -x 160 -y 50 "$bin"; expect start '^>'; }
start
t send-keys -t repl 'ckt.layout({4,8})' Enter
expect expression '^\(4,8\):\(1,4\)'
t send-keys -t repl 'print(ckt.ver' Tab ')' Enter
expect completion '^[0-9]+\.[0-9]+\.[0-9]+$'
t send-keys -t repl 'L = ckt.layout{2,3}' Enter 'L:si' Tab '()' Enter
expect method-completion '^6$'
t send-keys -t repl 'print(ckt.lds.xor_pre' Tab ' ~= nil)' Enter
expect nested-completion '^true$'
t send-keys -t repl '=1 + 1' Enter
expect equals-expression '^2$'
t send-keys -t repl 'help(ckt.composition)' Enter
expect help 'ckt.composition\(A, B\): R\(c\) = A\(B\(c\)\)'
t send-keys -t repl 'ckt.composition(ckt.layout"(4,3):(3,1)", ckt.layout"4:3")' Enter
expect error-message 'stdin:1: .*composition'
t send-keys -t repl 'function twice(x)' Enter
expect continuation '^>>'
t send-keys -t repl 'return 2 * x' Enter
t send-keys -t repl -l 'end'   # literal: tmux would read 'end' as the End key
t send-keys -t repl Enter 'twice(21)' Enter
expect multiline '^42$'
t send-keys -t repl 'while true do end' Enter
sleep 0.5
t send-keys -t repl C-c
expect interrupt 'interrupted!'
t send-keys -t repl 'print("alive", L)' Enter
expect alive '^alive +\(2,3\):\(1,2\)$'
# Ctrl-C at the prompt drops the half-typed line and keeps the REPL
t send-keys -t repl 'print("dropped' C-c
t send-keys -t repl 'print("kept")' Enter
expect ctrl-c-at-prompt '^kept$'
t send-keys -t repl C-d
gone=0
for _ in $(seq 1 50); do t has-session -t repl 2>/dev/null || { gone=1; break; }; sleep 0.1; done
if [ $gone -eq 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL ctrl-d: the REPL did not exit"; screen; fi
t kill-server 2>/dev/null
if grep -q 'twice(21)' "$CKT_HISTORY" && ! grep -q dropped "$CKT_HISTORY" 2>/dev/null; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL history: not saved"; fi
start
t send-keys -t repl Up
expect history-recall 'print\("kept"\)'
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
