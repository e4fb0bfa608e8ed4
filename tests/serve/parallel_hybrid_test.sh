#!/usr/bin/env bash
# `zinc-rt serve --parallel 4` on a hybrid (qwen35moe-tiny, cpu tier): the conv windows and
# DeltaNet matrices are kept per sequence slot, so requests decode together. 4 concurrent
# streaming clients x 12 sampled requests and 4 greedy ones: every request 200 and complete, each
# text equal to the same request (same seed) served by a --parallel 1 server. --delta-chunk 0 on
# both: the delta rule token by token (its chunked form, which a prompt split into steps would
# cut differently, is equal only within rounding).
# Needs ZINC_RT, ZINC_SHARED and SERVE_WORK (a scratch folder).
set -uo pipefail
model="$ZINC_SHARED/models/qwen35moe-tiny.gguf"
work="$SERVE_WORK/parallel-hybrid"
rm -rf "$work" && mkdir -p "$work"

source "$(dirname "$0")/start_server.sh"

start_server batched --delta-chunk 0 --ctx 256 serve "$model" --port 0 --parallel 4 --queue 16 --model-name q35
grep -q "recurrent state .* (4 sequence slots)" "$work/batched.err" && pass "the tier line says the state is kept for 4 sequence slots" ||
  fail "tier line: $(grep tier: "$work/batched.err")"
"$ZINC_RT" bench-serve --url "$base" --clients 4 --requests 12 --max-tokens 8 --seed 7 \
  --outputs "$work/batched.jsonl" >"$work/batched.json" || fail "bench-serve, 4 clients, exited $?"
"$ZINC_RT" bench-serve --url "$base" --clients 4 --requests 4 --max-tokens 8 --temperature 0 \
  --outputs "$work/greedy-batched.jsonl" >"$work/greedy-batched.json" || fail "bench-serve, greedy, exited $?"
kill $server; wait $server 2>/dev/null
ok=$(figure "$work/batched.json" ok)
[ "$ok" = 12 ] && pass "12 of 12 streamed requests answered 200 and complete" ||
  fail "complete requests: $ok of 12 ($(tr -d '\n ' <"$work/batched.json"))"

same_as_alone 12 4 --delta-chunk 0 --ctx 256 serve "$model" --port 0 --parallel 1 --queue 16 --model-name q35

[ $failures = 0 ] && echo "all passed" || echo "$failures failed"
exit $((failures > 0))
