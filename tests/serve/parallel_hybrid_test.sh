#!/usr/bin/env bash
# `zinc-rt serve --parallel N` on a hybrid (qwen35moe-tiny): the conv windows and DeltaNet
# matrices are kept per sequence slot, so requests decode together. On the cpu tier (--parallel 4:
# 4 concurrent streaming clients x 12 sampled requests and 4 greedy ones) and on the PM4 tier
# (--tier=kfd --sim, the kernels' machine code in the ISA interpreter; --parallel 2: 2 clients x 6
# and 2): every request 200 and complete, each text equal to the same request (same seed) served
# by a --parallel 1 server of the same tier. --delta-chunk 0 on the cpu tier's servers: the delta
# rule token by token (its chunked form, which a prompt split into steps would cut differently,
# is equal only within rounding); the PM4 tier always steps it token by token.
# Needs ZINC_RT, ZINC_SHARED and SERVE_WORK (a scratch folder).
set -uo pipefail
model="$ZINC_SHARED/models/qwen35moe-tiny.gguf"
root="$SERVE_WORK/parallel-hybrid"
rm -rf "$root" && mkdir -p "$root"

source "$(dirname "$0")/start_server.sh"

# hybrid_tier NAME SLOTS SAMPLED GREEDY TIER-ARGS...: a --parallel SLOTS server, then --parallel 1.
hybrid_tier() {
  local name=$1 slots=$2 sampled=$3 greedy=$4; shift 4
  work="$root/$name" && mkdir -p "$work"
  echo "# $name: $*"
  start_server batched "$@" --ctx 256 serve "$model" --port 0 --parallel "$slots" --queue 16 --model-name q35
  grep -q "recurrent state .* ($slots sequence slots)" "$work/batched.err" &&
    pass "the tier line says the state is kept for $slots sequence slots" || fail "tier line: $(grep tier: "$work/batched.err")"
  batched_requests "$slots" "$sampled" "$greedy"
  same_as_alone "$sampled" "$greedy" "$@" --ctx 256 serve "$model" --port 0 --parallel 1 --queue 16 --model-name q35
}

hybrid_tier cpu 4 12 4 --delta-chunk 0
hybrid_tier kfd 2 6 2 --tier kfd --sim

[ $failures = 0 ] && echo "all passed" || echo "$failures failed"
exit $((failures > 0))
