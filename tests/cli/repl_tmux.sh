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
t send-keys -t repl 'print("alive")' Enter
expect alive '^alive$'
t send-keys -t repl C-d
sleep 0.5
t kill-server 2>/dev/null
if grep -q 'twice(21)' "$CKT_HISTORY" 2>/dev/null; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL history: not saved"; fi
start
t send-keys -t repl Up
expect history-recall 'print\("alive"\)'
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
