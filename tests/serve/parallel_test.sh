#!/usr/bin/env bash
# `zinc-rt serve --parallel` under load, driven by `zinc-rt bench-serve` (C++ streaming clients):
# 1. --parallel 8 --queue 64, 64 concurrent streaming clients x 4 requests on qwen3-tiny: every
#    request 200 and complete, no crash, RSS growth < 10 % (after one warm-up round), and each
#    request's text equal to the same request (same seed) served alone by a --parallel 1 server.
# 2. SIGTERM during 8 parallel streams and a full queue: exit 0 within 5 s, and every client gets
#    a terminated stream (an error event), none a reset.
# Needs ZINC_RT, ZINC_SHARED and SERVE_WORK (a scratch folder).
set -uo pipefail
model="$ZINC_SHARED/models/qwen3-tiny.gguf"
work="$SERVE_WORK/parallel"
rm -rf "$work" && mkdir -p "$work"

source "$(dirname "$0")/start_server.sh"

# 1. Load: 64 clients x 4 requests, 8 tokens each, against --parallel 8 --queue 64.
start_server batched --ctx 256 serve "$model" --port 0 --parallel 8 --queue 64 --model-name tiny
"$ZINC_RT" bench-serve --url "$base" --clients 64 --requests 256 --warmup 64 --max-tokens 8 --seed 7 \
  --outputs "$work/batched.jsonl" >"$work/batched.json" || fail "bench-serve against --parallel 8 exited $?"
if kill -0 $server 2>/dev/null; then pass "the server is still up after 320 requests"; else fail "the server died"; fi
kill $server; wait $server 2>/dev/null
ok=$(figure "$work/batched.json" ok)
[ "$ok" = 256 ] && pass "256 of 256 streamed requests answered 200 and complete" ||
  fail "complete requests: $ok of 256 ($(tr -d '\n ' <"$work/batched.json"))"
growth=$(figure "$work/batched.json" rss_growth)
if [ "${ZINC_SANITIZED:-0}" = 1 ]; then
  # ASan's quarantine holds freed blocks back (up to 256 MiB): growth here is the sanitizer's.
  echo "# RSS growth $growth under the sanitizers: not held to 10 % (the release build is: ./test.sh --release serve_parallel)"
elif awk -v g="$growth" 'BEGIN { exit !(g < 0.10 && g > -1) }'; then pass "RSS growth $growth < 10 %"; else fail "RSS growth $growth"; fi
echo "# $(tr -d '\n ' <"$work/batched.json")"

# The same requests one at a time on a server that batches nothing.
start_server alone --ctx 256 serve "$model" --port 0 --parallel 1 --queue 4 --model-name tiny
"$ZINC_RT" bench-serve --url "$base" --clients 1 --requests 256 --max-tokens 8 --seed 7 \
  --outputs "$work/alone.jsonl" >"$work/alone.json" || fail "bench-serve against --parallel 1 exited $?"
kill $server; wait $server 2>/dev/null
if cmp -s "$work/batched.jsonl" "$work/alone.jsonl"; then pass "each request's text equals the same request served alone"
else fail "batched and alone differ: $(diff "$work/batched.jsonl" "$work/alone.jsonl" | head -4)"; fi

# 2. SIGTERM with 8 streams running and 8 waiting (--queue 8 full): greedy, so no stream ends early.
start_server term --ctx 1024 serve "$model" --port 0 --parallel 8 --queue 8 --model-name tiny
health_has() {  # health_has TEXT: waits up to 10 s for /health to contain it
  for _ in $(seq 200); do curl -s "$base/health" | grep -q "$1" && return 0; sleep 0.05; done
  return 1
}
"$ZINC_RT" bench-serve --url "$base" --clients 8 --requests 8 --max-tokens 1000 --temperature 0 \
  --outputs "$work/term-running.jsonl" >"$work/term-running.json" &
running=$!
health_has '"running":8' || fail "8 streams never ran: $(curl -s "$base/health")"
"$ZINC_RT" bench-serve --url "$base" --clients 8 --requests 8 --max-tokens 1000 --temperature 0 \
  --outputs "$work/term-queued.jsonl" >"$work/term-queued.json" &
queued=$!
health_has '"waiting":8' && pass "8 streams running and the queue (8) full" || fail "the queue never filled: $(curl -s "$base/health")"
t0=$(date +%s%N)
kill -TERM $server
exited=0
for _ in $(seq 100); do kill -0 $server 2>/dev/null || { exited=1; break; }; sleep 0.05; done
wait $server; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ $exited = 1 ] && [ $rc = 0 ]; then pass "SIGTERM: exit 0 after $ms ms (< 5 s)"; else fail "SIGTERM: exited=$exited rc=$rc after $ms ms"; fi
wait $running $queued
terminated=$(cat "$work/term-running.jsonl" "$work/term-queued.jsonl" |
  grep -c '"error":"the request was cancelled: the server is stopping","index":[0-9]*,"status":200')
[ "$terminated" = 16 ] && pass "16 of 16 clients got a 200 stream ended by an error event" ||
  fail "terminated streams: $terminated of 16: $(cut -c 1-160 "$work"/term-*.jsonl)"
cut=$(( $(figure "$work/term-running.json" cut_streams) + $(figure "$work/term-queued.json" cut_streams) ))
[ "$cut" = 0 ] && pass "no stream was reset" || fail "$cut streams were cut without an error event"

[ $failures = 0 ] && echo "all passed" || echo "$failures failed"
exit $((failures > 0))
