# Sourced by the serve test scripts (needs $ZINC_RT and $work): pass/fail counting, `figure`, and
# start_server NAME ARGS... which starts `zinc-rt ARGS...` (output in $work/NAME.out/.err) and
# sets $base (and $server, its pid) once it listens. Every server started is killed at exit.
failures=0
pass() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; failures=$((failures + 1)); }
# A JSON number or string at the top level of a bench-serve report: `figure FILE NAME`.
figure() { grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/^[^:]*: //'; }
servers=()
trap 'for p in "${servers[@]}"; do kill $p 2>/dev/null; wait $p 2>/dev/null; done' EXIT
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
