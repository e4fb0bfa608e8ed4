#!/usr/bin/env bash
# `zinc-rt pull`, `ls`, `rm` and models by name, against a loopback stand-in for the Hugging
# Face Hub (hf_server.py, 127.0.0.1 only): the Q4_K_M file chosen from a repo of several, a
# resume after a cut connection (HTTP Range), a corrupt download and a non-GGUF refused, a 404
# and a full disk (/dev/full) each one error line; the pulled model runs by name.
set -euo pipefail
zinc=${ZINC_RT:?} shared=${ZINC_SHARED:?}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
server_pid=
serve_pid=
cleanup() {
  for pid in $server_pid $serve_pid; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

stories=$shared/models/stories260K.gguf
mkdir -p "$work/hub/test/stories" "$work/hub/test/bad"
cp "$stories" "$work/hub/test/stories/stories260K-Q4_K_M.gguf"
cp "$stories" "$work/hub/test/stories/stories260K-Q8_0.gguf"
cp "$stories" "$work/hub/test/bad/cut.gguf"
cp "$stories" "$work/hub/test/bad/corrupt.gguf"
head -c 4096 "$stories" > "$work/hub/test/bad/truncated-noetag.gguf"
python3 "$here/hf_server.py" "$work/hub" "$work/port" "$work/requests.log" &
server_pid=$!
for _ in $(seq 1 100); do [ -f "$work/port" ] && break; sleep 0.1; done
[ -f "$work/port" ] || fail "the loopback server did not start"
endpoint=http://127.0.0.1:$(cat "$work/port")
export ZINC_MODELS=$work/cache

# Runs zinc-rt; sets $out (stdout+stderr) and $rc.
z() { set +e; out=$("$zinc" "$@" 2>&1); rc=$?; set -e; }
# The run failed with exactly this one error line.
expect_error() {
  local want=$1; shift
  z "$@"
  [ "$rc" -eq 1 ] || fail "zinc-rt $* exited $rc: $out"
  [ "$(grep -c '^zinc-rt: error: ' <<<"$out")" -eq 1 ] || fail "not one error line: $out"
  got=$(grep '^zinc-rt: error: ' <<<"$out")
  [ "$got" = "zinc-rt: error: $want" ] || fail "error line: got '$got', want 'zinc-rt: error: $want'"
  echo "ok: $got"
}

# The Q4_K_M file is chosen among several, checked and cached under its name.
z pull test/stories --endpoint "$endpoint"
[ "$rc" -eq 0 ] || fail "pull test/stories: $out"
grep -q "^pulled test/stories:stories260K-Q4_K_M.gguf (.* MiB, sha256 checked) into $ZINC_MODELS/test/stories/stories260K-Q4_K_M.gguf$" <<<"$out" \
  || fail "pull output: $out"
cmp "$stories" "$ZINC_MODELS/test/stories/stories260K-Q4_K_M.gguf" || fail "the cached file differs"
z ls
[ "$out" = "test/stories:stories260K-Q4_K_M.gguf  1.1 MiB" ] || fail "ls: $out"
echo "ok: pull chose Q4_K_M; ls: $out"

# The cached model runs by name, as it does by path.
z run test/stories -n 6 --temp 0
by_name=$(grep '^Once upon' <<<"$out") || fail "run by name: $out"
z run "$stories" -n 6 --temp 0
[ "$by_name" = "$(grep '^Once upon' <<<"$out")" ] || fail "by name '$by_name' differs from by path: $out"
echo "ok: run test/stories: $by_name"

# A connection cut halfway: the pull resumes with a Range request and the file is whole.
z pull test/bad:cut.gguf --endpoint "$endpoint"
[ "$rc" -eq 0 ] || fail "pull after a cut: $out"
grep -q "connection stopped at" <<<"$out" || fail "the cut was not noticed: $out"
grep -qE "GET /cdn/test/bad/cut.gguf Range=bytes=[0-9]+-$" "$work/requests.log" || fail "no Range request: $(cat "$work/requests.log")"
cmp "$stories" "$ZINC_MODELS/test/bad/cut.gguf" || fail "the resumed file differs"
echo "ok: resumed: $(grep 'Range=bytes' "$work/requests.log")"

# Refused before entering the cache: a checksum that does not match, a file that is no whole GGUF.
sha=$(sha256sum "$stories" | cut -d' ' -f1)
expect_error "pull: test/bad:corrupt.gguf: sha256 $(python3 -c "
import hashlib,sys; d=bytearray(open(sys.argv[1],'rb').read()); d[len(d)//2]^=0xFF; print(hashlib.sha256(d).hexdigest())" "$stories") but the server's ETag says $sha; the download was removed" \
  pull test/bad:corrupt.gguf --endpoint "$endpoint"
z pull test/bad:truncated-noetag.gguf --endpoint "$endpoint"
[ "$rc" -eq 1 ] && grep -q "^zinc-rt: error: pull: test/bad:truncated-noetag.gguf: not a whole GGUF file, the download was removed: " <<<"$out" \
  || fail "truncated: $out"
echo "ok: $(grep '^zinc-rt: error' <<<"$out")"
[ -z "$(find "$ZINC_MODELS/test/bad" -name 'corrupt*' -o -name 'truncated*')" ] || fail "a refused download stayed in the cache"

# Not there: one line with the URL.
expect_error "pull: not found: $endpoint/test/stories/resolve/main/missing.gguf (HTTP 404)" pull test/stories:missing.gguf --endpoint "$endpoint"
expect_error "pull: no repository test/none at $endpoint (HTTP 404)" pull test/none --endpoint "$endpoint"

# A full disk: the download's file is /dev/full, which refuses every write with ENOSPC.
mkdir -p "$work/full/test/stories"
ln -s /dev/full "$work/full/test/stories/stories260K-Q8_0.gguf.partial"
ZINC_MODELS=$work/full z pull test/stories:stories260K-Q8_0.gguf --endpoint "$endpoint"
[ "$rc" -eq 1 ] || fail "full disk: $out"
[ "$(grep -c '^zinc-rt: error: ' <<<"$out")" -eq 1 ] || fail "full disk, not one error line: $out"
grep -q "^zinc-rt: error: pull: no space left on the device of $work/full/test/stories (1 MiB to go)$" <<<"$out" || fail "full disk: $out"
echo "ok: $(grep '^zinc-rt: error' <<<"$out")"

# serve with no model: the cached models by name, one resident at a time, 404 for the rest.
"$zinc" --threads 1 serve --port 0 --max-models 1 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 1 200); do grep -q 'listening on' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -oE 'http://[0-9.]+:[0-9]+' "$work/serve.out") || fail "serve did not start: $(cat "$work/serve.err")"
models=$(curl -sS "$url/v1/models")
[ "$models" = '{"data":[{"id":"test/bad:cut.gguf","loaded":false,"object":"model","owned_by":"zinc-rt"},{"id":"test/stories:stories260K-Q4_K_M.gguf","loaded":false,"object":"model","owned_by":"zinc-rt"}],"object":"list"}' ] \
  || fail "/v1/models: $models"
ask() { curl -sS -w ' HTTP %{http_code}' "$url/v1/completions" -H 'Content-Type: application/json' \
  -d "{\"model\": \"$1\", \"prompt\": \"Once upon a time\", \"max_tokens\": 6, \"temperature\": 0}"; }
answer=$(ask test/stories)
grep -q '"model":"test/stories:stories260K-Q4_K_M.gguf"' <<<"$answer" && grep -q ' HTTP 200$' <<<"$answer" || fail "by name: $answer"
grep -q "\"text\":\"${by_name#Once upon a time}\"" <<<"$answer" || fail "the answer differs from run's '$by_name': $answer"
echo "ok: serve answered test/stories: $answer"
answer=$(ask cut.gguf)
grep -q ' HTTP 200$' <<<"$answer" || fail "second model: $answer"
grep -q '^zinc-rt serve: unloading test/stories:stories260K-Q4_K_M.gguf (least recently used)$' "$work/serve.err" || fail "no unload: $(cat "$work/serve.err")"
answer=$(ask test/nothing)
[ "$answer" = '{"error":{"code":"model_not_found","message":"The model '"'"'test/nothing'"'"' does not exist (GET /v1/models lists the cached ones)","param":"model","type":"invalid_request_error"}} HTTP 404' ] \
  || fail "unknown model: $answer"
echo "ok: unknown model: $answer"
kill -INT $serve_pid; wait $serve_pid || fail "serve did not stop cleanly: $(cat "$work/serve.err")"

# rm, then the name is gone.
z rm test/stories
[ "$rc" -eq 0 ] && [ "$out" = "removed test/stories:stories260K-Q4_K_M.gguf" ] || fail "rm: $out"
expect_error "'test/stories' is neither a file nor a cached model (\`zinc-rt ls\` lists them in $ZINC_MODELS, \`zinc-rt pull REPO\` fetches one)" \
  run test/stories -n 1
echo PASS
