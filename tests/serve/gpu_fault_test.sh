#!/usr/bin/env bash
# `zinc-rt serve` on the simulated GPU when the GPU fails (issue 22): a server whose GPU hangs
# once (ZINC_SIM_FAULT, kfd/tier/fault_spec.h) ends that request's stream with an error event
# naming the token, layer and op, keeps running, and answers the next request with the text a
# fresh server gives. Kernels on PoCL (the fault path does not depend on the ISA interpreter).
# Needs ZINC_RT, ZINC_SHARED and SERVE_WORK.
set -uo pipefail
model="$ZINC_SHARED/models/stories260K.gguf"
work="$SERVE_WORK/gpu_fault"
mkdir -p "$work"
source "$(dirname "$0")/start_server.sh"
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$3', got '$2'"; fi; }
contains() { if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1: no '$3' in $(head -c 600 "$2")"; fi; }
body='{"model":"m","prompt":"Once upon a time","max_tokens":8,"temperature":0,"stream":true}'
post() { curl -s --max-time 60 -o "$2" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$body" "$1/v1/completions"; }
# The streamed text: every choices[0].text of the SSE events, joined.
text() { grep -o '"text":"[^"]*"' "$1" | sed 's/^"text":"//; s/"$//' | tr -d '\n'; }
gpu=(--tier=kfd --sim --sim-exec=pocl --wait-timeout 1000 --ctx 64)

start_server fresh "${gpu[@]}" serve "$model" --port 0 --model-name m
fresh=$base
expect "fresh server: 200" "$(post "$fresh" "$work/fresh.sse")" 200
want=$(text "$work/fresh.sse")
[ -n "$want" ] || fail "fresh server: no text in $(head -c 300 "$work/fresh.sse")"

# Position 7 is a generated token's (the prompt takes fewer positions).
ZINC_SIM_FAULT=hang:7:blk.0.attn_q start_server faulty "${gpu[@]}" serve "$model" --port 0 --model-name m
expect "hung request: the stream still answers 200" "$(post "$base" "$work/hung.sse")" 200
contains "its stream ends with an error event" "$work/hung.sse" '"error"'
contains "naming the fault, layer and op" "$work/hung.sse" "GPU hang at sampled token"
contains "... the layer and op" "$work/hung.sse" "layer 0, op 'attn_q'"
contains "... and the recovery" "$work/hung.sse" "recovered: queue made anew"
contains "then [DONE]" "$work/hung.sse" "[DONE]"
kill -0 "$server" 2>/dev/null && pass "the server keeps running" || fail "the server exited"
expect "next request: 200" "$(post "$base" "$work/next.sse")" 200
expect "next request: the fresh server's text" "$(text "$work/next.sse")" "$want"

[ "$failures" = 0 ] && echo "all passed" || { echo "$failures failed"; exit 1; }
