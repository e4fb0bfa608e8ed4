#!/usr/bin/env bash
# `zinc-rt chat` on a real terminal (tmux): two turns, the Up arrow recalls the last line,
# Ctrl-C mid-reply returns to the prompt with the conversation intact (the next turn finds every
# token of it cached and prefills only its own), /reset asks first, and Ctrl-C twice at the
# prompt exits. Replies are long (-n 100000) so that each is still running when Ctrl-C comes.
# Every wait is bounded (120 s) and prints the screen when it runs out.
set -euo pipefail
zinc=${ZINC_RT:?} model=${ZINC_SHARED:?}/models/stories260K.gguf
command -v tmux >/dev/null || { echo "tmux is missing (packages-debian.txt lists it)"; exit 1; }
sock=zinc-chat-$$
trap 'tmux -L $sock kill-server 2>/dev/null || true' EXIT
tmux -L $sock -f /dev/null new-session -d -x 160 -y 60 \
  "$zinc --ctx 100000 --rope-scaling none --threads 1 chat $model -v -n 100000 --seed 7; echo chat-exited-\$?; sleep 120"

screen() { tmux -L $sock capture-pane -p -J -S -2000 | sed 's/ *$//'; }
fail() { echo "FAIL: $*"; echo "---- screen ----"; screen; exit 1; }
# Waits until the screen matches an extended regex; prints the matching lines.
wait_for() {
  for _ in $(seq 1 1200); do
    if screen | grep -E -- "$1" >/dev/null; then screen | grep -E -- "$1"; return 0; fi
    sleep 0.1
  done
  fail "timed out waiting for: $1"
}
count() { screen | grep -cE -- "$1" || true; }
# Waits until the reply of the latest turn has printed some text, then presses Ctrl-C.
interrupt_reply() {
  local turn_line=$1 stopped_before
  stopped_before=$(count '^\[stopped; ')
  for _ in $(seq 1 1200); do
    if screen | grep -A1 -F -- "$turn_line" | tail -1 | grep -q '[a-zA-Z]'; then break; fi
    sleep 0.1
  done
  tmux -L $sock send-keys C-c
  for _ in $(seq 1 1200); do
    [ "$(count '^\[stopped; ')" -gt "$stopped_before" ] && return 0
    sleep 0.1
  done
  fail "Ctrl-C did not stop the reply of: $turn_line"
}
last_line() { screen | grep -v '^$' | tail -1; }

wait_for '^/help lists the commands'
wait_for '^>$'
tmux -L $sock send-keys 'Once upon a time' Enter
turn1=$(wait_for '^\[turn 1: prefill 0 cached \+ [0-9]+ new tokens\]$')
interrupt_reply "$turn1"
conversation=$(screen | grep -oE 'conversation [0-9]+ tokens\]$' | tail -1 | grep -oE '[0-9]+')
echo "after turn 1 (stopped by Ctrl-C): $conversation tokens"
wait_for '^>$'

tmux -L $sock send-keys Up
for _ in $(seq 1 100); do [ "$(last_line)" = "> Once upon a time" ] && break; sleep 0.1; done
[ "$(last_line)" = "> Once upon a time" ] || fail "Up did not recall the last line"
tmux -L $sock send-keys ' there was a dog' Enter
turn2=$(wait_for "^\[turn 2: prefill $conversation cached \+ [0-9]+ new tokens\]\$")
echo "$turn2"
new=$(echo "$turn2" | grep -oE '[0-9]+ new' | grep -oE '[0-9]+')
[ "$new" -gt 0 ] && [ "$new" -lt "$conversation" ] || fail "turn 2 prefilled $new tokens; only its own (fewer than $conversation) expected"
wait_for '^> Once upon a time there was a dog$'
interrupt_reply "$turn2"
wait_for '^>$'

tmux -L $sock send-keys '/reset' Enter
wait_for '^Start the conversation over\? \[y/N\]$'
tmux -L $sock send-keys 'y' Enter
wait_for '^conversation reset$'
tmux -L $sock send-keys 'Hi' Enter
turn3=$(wait_for '^\[turn 3: prefill 0 cached \+ [0-9]+ new tokens\]$')
interrupt_reply "$turn3"
wait_for '^>$'

tmux -L $sock send-keys C-c
wait_for '^\(Ctrl-C again to exit'
tmux -L $sock send-keys C-c
wait_for '^chat-exited-0$'
echo "PASS"
