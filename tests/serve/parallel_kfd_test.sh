#!/usr/bin/env bash
# `zinc-rt serve --parallel 2` on the PM4 tier (--tier=kfd --sim: the simulated GPU running the
# kernels' machine code): requests decode together through its plans over rows of two sequences.
# 2 concurrent streaming clients x 6 sampled requests and 2 greedy ones on stories260K: every
# request 200 and complete, each text equal to the same request (same seed) served by a
# --parallel 1 server, whose one-sequence plans sample on the GPU (at --ctx 128 a row's logits
# are bit for bit its sequence's alone, tiers.md "The PM4 tier's plans over rows").
# Needs ZINC_RT, ZINC_SHARED and SERVE_WORK (a scratch folder).
set -uo pipefail
model="$ZINC_SHARED/models/stories260K.gguf"
work="$SERVE_WORK/parallel-kfd"
rm -rf "$work" && mkdir -p "$work"

source "$(dirname "$0")/start_server.sh"

start_server batched --tier kfd --sim --ctx 128 serve "$model" --port 0 --parallel 2 --queue 8 --model-name tiny
grep -q "(2 sequence slots)" "$work/batched.err" && pass "the tier line says it holds 2 sequence slots" ||
  fail "tier line: $(grep tier: "$work/batched.err")"
batched_requests 2 6 2
same_as_alone 6 2 --tier kfd --sim --ctx 128 serve "$model" --port 0 --parallel 1 --queue 8 --model-name tiny

[ $failures = 0 ] && echo "all passed" || echo "$failures failed"
exit $((failures > 0))
