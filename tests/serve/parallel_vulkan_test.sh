#!/usr/bin/env bash
# `zinc-rt serve` on the vulkan tier (lavapipe in CI) batches by default: --parallel is not given,
# so the tier's default (4 KV slots, continuous batching through its batched plans) applies.
# 8 concurrent streaming clients x 24 sampled requests on qwen3-tiny: every request 200 and
# complete, each request's text equal to the same request (same seed) served alone by the same
# server (a batched plan's rows do not depend on their neighbours), and greedy texts equal to a
# --parallel 1 server's on the same tier (its one-sequence plans and on-device sampling); the same
# for a hybrid (qwen35moe-tiny), whose recurrent state the tier keeps per slot.
# Needs ZINC_RT, ZINC_SHARED and SERVE_WORK (a scratch folder). Skips without a Vulkan device.
set -uo pipefail
model="$ZINC_SHARED/models/qwen3-tiny.gguf"
work="$SERVE_WORK/parallel-vulkan"
rm -rf "$work" && mkdir -p "$work"
"$ZINC_RT" devices 2>/dev/null | grep -q "^device [0-9]*:" || { echo "# no Vulkan device: skipped"; exit 77; }

source "$(dirname "$0")/start_server.sh"

start_server batched --tier vulkan --ctx 128 serve "$model" --port 0 --queue 16 --model-name tiny
grep -q "4 generated together (continuous batching" "$work/batched.err" &&
  pass "the vulkan tier batches 4 requests by default" || fail "default --parallel: $(grep queue: "$work/batched.err")"
# Sampled (seed 7 + i): 8 clients at once, then the same 24 requests one at a time.
"$ZINC_RT" bench-serve --url "$base" --clients 8 --requests 24 --max-tokens 8 --seed 7 \
  --outputs "$work/batched.jsonl" >"$work/batched.json" || fail "bench-serve, 8 clients, exited $?"
"$ZINC_RT" bench-serve --url "$base" --clients 1 --requests 24 --max-tokens 8 --seed 7 \
  --outputs "$work/alone.jsonl" >"$work/alone.json" || fail "bench-serve, 1 client, exited $?"
# Greedy, 8 clients at once, for the server that batches nothing below.
"$ZINC_RT" bench-serve --url "$base" --clients 8 --requests 8 --max-tokens 8 --temperature 0 \
  --outputs "$work/greedy-batched.jsonl" >"$work/greedy-batched.json" || fail "bench-serve, greedy, exited $?"
kill $server; wait $server 2>/dev/null
ok=$(figure "$work/batched.json" ok)
[ "$ok" = 24 ] && pass "24 of 24 streamed requests answered 200 and complete" ||
  fail "complete requests: $ok of 24 ($(tr -d '\n ' <"$work/batched.json"))"
if cmp -s "$work/batched.jsonl" "$work/alone.jsonl"; then pass "each sampled request's text equals the same request served alone"
else fail "batched and alone differ: $(diff "$work/batched.jsonl" "$work/alone.jsonl" | head -4)"; fi

# --parallel 1 runs the one-sequence plans (prompts through the tiled matmul, sampling on the
# GPU): the same greedy texts (sampled ones may differ there: its logits are not bit-equal).
start_server alone --tier vulkan --ctx 128 serve "$model" --port 0 --parallel 1 --queue 4 --model-name tiny
"$ZINC_RT" bench-serve --url "$base" --clients 1 --requests 8 --max-tokens 8 --temperature 0 \
  --outputs "$work/greedy-alone.jsonl" >"$work/greedy-alone.json" || fail "bench-serve against --parallel 1 exited $?"
kill $server; wait $server 2>/dev/null
if cmp -s "$work/greedy-batched.jsonl" "$work/greedy-alone.jsonl"; then pass "greedy texts equal those of a --parallel 1 server"
else fail "greedy batched and --parallel 1 differ: $(diff "$work/greedy-batched.jsonl" "$work/greedy-alone.jsonl" | head -4)"; fi

# A hybrid (qwen35moe-tiny) batches by default too: the tier keeps its conv windows and DeltaNet
# matrices per slot. 4 clients x 8 sampled requests, then the same one at a time.
start_server hybrid --tier vulkan --ctx 128 serve "$ZINC_SHARED/models/qwen35moe-tiny.gguf" --port 0 --queue 16 --model-name q35
grep -q "4 generated together (continuous batching" "$work/hybrid.err" &&
  pass "the vulkan tier batches 4 requests of a hybrid by default" || fail "hybrid --parallel: $(grep queue: "$work/hybrid.err")"
"$ZINC_RT" bench-serve --url "$base" --clients 4 --requests 8 --max-tokens 8 --seed 7 \
  --outputs "$work/hybrid-batched.jsonl" >"$work/hybrid-batched.json" || fail "bench-serve, hybrid, 4 clients, exited $?"
"$ZINC_RT" bench-serve --url "$base" --clients 1 --requests 8 --max-tokens 8 --seed 7 \
  --outputs "$work/hybrid-alone.jsonl" >"$work/hybrid-alone.json" || fail "bench-serve, hybrid, 1 client, exited $?"
kill $server; wait $server 2>/dev/null
ok=$(figure "$work/hybrid-batched.json" ok)
[ "$ok" = 8 ] && pass "8 of 8 hybrid requests answered 200 and complete" || fail "hybrid requests complete: $ok of 8"
if cmp -s "$work/hybrid-batched.jsonl" "$work/hybrid-alone.jsonl"; then pass "each hybrid request's text equals the same request served alone"
else fail "hybrid batched and alone differ: $(diff "$work/hybrid-batched.jsonl" "$work/hybrid-alone.jsonl" | head -4)"; fi

[ $failures = 0 ] && echo "all passed" || echo "$failures failed"
exit $((failures > 0))
