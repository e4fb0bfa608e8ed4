# Sourced by the serve test scripts (needs $ZINC_RT and $work): pass/fail counting, `figure`, and
# start_server NAME ARGS... which starts `zinc-rt ARGS...` (output in $work/NAME.out/.err) and
# sets $base (and $server, its pid) once it listens, batched_requests and same_as_alone (below).
# Every server started is killed at exit.
failures=0
pass() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; failures=$((failures + 1)); }
# A JSON number or string at the top level of a bench-serve report: `figure FILE NAME`.
figure() { grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/^[^:]*: //'; }
servers=()
trap 'for p in "${servers[@]}"; do kill $p 2>/dev/null; wait $p 2>/dev/null; done' EXIT
# batched_requests CLIENTS SAMPLED GREEDY: sends the server at $base (a batched one) SAMPLED
# requests (seed 7) and GREEDY greedy ones from CLIENTS concurrent streaming clients (texts in
# $work/batched.jsonl, $work/greedy-batched.jsonl), stops it, and checks that every sampled request
# was answered 200 and complete.
batched_requests() {
  local clients=$1 sampled=$2 greedy=$3 ok
  "$ZINC_RT" bench-serve --url "$base" --clients "$clients" --requests "$sampled" --max-tokens 8 --seed 7 \
    --outputs "$work/batched.jsonl" >"$work/batched.json" || fail "bench-serve, $clients clients, exited $?"
  "$ZINC_RT" bench-serve --url "$base" --clients "$clients" --requests "$greedy" --max-tokens 8 --temperature 0 \
    --outputs "$work/greedy-batched.jsonl" >"$work/greedy-batched.json" || fail "bench-serve, greedy, exited $?"
  kill $server; wait $server 2>/dev/null
  ok=$(figure "$work/batched.json" ok)
  [ "$ok" = "$sampled" ] && pass "$sampled of $sampled streamed requests answered 200 and complete" ||
    fail "complete requests: $ok of $sampled ($(tr -d '\n ' <"$work/batched.json"))"
}
# same_as_alone SAMPLED GREEDY ARGS...: starts `zinc-rt ARGS...` (a --parallel 1 server) as
# "alone", sends it SAMPLED requests (seed 7) and GREEDY greedy ones one at a time, and checks
# that each text equals the batched server's ($work/batched.jsonl, $work/greedy-batched.jsonl).
same_as_alone() {
  local sampled=$1 greedy=$2; shift 2
  start_server alone "$@"
  "$ZINC_RT" bench-serve --url "$base" --clients 1 --requests "$sampled" --max-tokens 8 --seed 7 \
    --outputs "$work/alone.jsonl" >"$work/alone.json" || fail "bench-serve against --parallel 1 exited $?"
  "$ZINC_RT" bench-serve --url "$base" --clients 1 --requests "$greedy" --max-tokens 8 --temperature 0 \
    --outputs "$work/greedy-alone.jsonl" >"$work/greedy-alone.json" || fail "bench-serve, greedy, --parallel 1 exited $?"
  kill $server; wait $server 2>/dev/null
  if cmp -s "$work/batched.jsonl" "$work/alone.jsonl"; then pass "each sampled request's text equals the same request served alone"
  else fail "batched and alone differ: $(diff "$work/batched.jsonl" "$work/alone.jsonl" | head -4)"; fi
  if cmp -s "$work/greedy-batched.jsonl" "$work/greedy-alone.jsonl"; then pass "greedy texts equal those of a --parallel 1 server"
  else fail "greedy batched and --parallel 1 differ: $(diff "$work/greedy-batched.jsonl" "$work/greedy-alone.jsonl" | head -4)"; fi
}
start_server() {
  local name=$1; shift
  "$ZINC_RT" --threads 2 "$@" >"$work/$name.out" 2>"$work/$name.err" &
  server=$!
  servers+=($server)
  for _ in $(seq 300); do
    grep -q "listening on http://" "$work/$name.out" && break
    kill -0 $server 2>/dev/null || break
    sleep 0.1
  done
  base=$(grep -o "http://[0-9.:]*" "$work/$name.out")
  [ -n "$base" ] || { echo "FAIL - the server $name did not start"; cat "$work/$name.err"; exit 1; }
}
