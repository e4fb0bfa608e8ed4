#!/usr/bin/env bash
# `zinc-rt serve` on loopback as clients meet it: --api-key and --cors with curl; the chat page
# in headless chromium (puppeteer-core); the official openai npm package (driven by Node);
# structured output, tool calls, Ollama's API and /metrics (features_client.mjs); then curl for malformed JSON, a prompt over the context, an unknown model, concurrent
# clients against a small queue, a client that drops mid-stream, and a stream of valid UTF-8.
# Needs ZINC_RT, ZINC_SHARED and SERVE_WORK (a folder for node_modules and scratch files).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
model="$ZINC_SHARED/models/qwen3-tiny.gguf"
work="$SERVE_WORK/clients"
mkdir -p "$work"
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$3', got '$2'"; fi; }
# The value at a path of the JSON on stdin, e.g. `field error.code`.
field() {
  node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
    let v = JSON.parse(s); for (const k of process.argv[1].split(".")) v = v?.[k];
    console.log(typeof v === "object" ? JSON.stringify(v) : v); })' "$1"
}
post() {  # post PATH BODY OUTFILE -> prints the HTTP status
  curl -s --max-time 60 -o "$3" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$2" "$base$1"
}

# Node packages, installed once per lockfile.
mkdir -p "$SERVE_WORK/node"
cp "$here"/node/package.json "$here"/node/package-lock.json "$here"/node/*.mjs "$SERVE_WORK/node/"
if ! cmp -s "$here/node/package-lock.json" "$SERVE_WORK/node/node_modules/.installed-lock.json"; then
  (cd "$SERVE_WORK/node" && npm ci --no-audit --no-fund --loglevel=error) || { echo "FAIL - npm ci"; exit 1; }
  cp "$here/node/package-lock.json" "$SERVE_WORK/node/node_modules/.installed-lock.json"
fi

source "$(dirname "$0")/start_server.sh"

# Operations: --api-key (401 without it, /health open), --cors (the allowed origin only).
start_server keyed --ctx 256 serve "$model" --port 0 --model-name tiny --api-key sekrit --cors http://ok.example
expect "no key -> 401" "$(curl -s -o "$work/401.json" -w '%{http_code}' "$base/v1/models")" 401
expect "its code" "$(field error.code <"$work/401.json")" invalid_api_key
expect "wrong key -> 401" "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer nope' "$base/v1/models")" 401
expect "right key -> 200" "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer sekrit' "$base/v1/models")" 200
expect "/health needs no key" "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" 200
cors=$(curl -s -D - -o /dev/null -X OPTIONS -H 'Origin: http://ok.example' -H 'Access-Control-Request-Method: POST' \
  "$base/v1/chat/completions" | tr -d '\r')
if grep -qx 'Access-Control-Allow-Origin: http://ok.example' <<<"$cors" && grep -q '^HTTP/1.1 204' <<<"$cors"; then
  pass "preflight from the --cors origin: 204 with Access-Control-Allow-Origin"; else fail "preflight: $cors"; fi
if curl -s -D - -o /dev/null -H 'Origin: http://evil.example' -H 'Authorization: Bearer sekrit' "$base/v1/models" |
  grep -qi '^Access-Control-Allow-Origin'; then fail "another origin gets no CORS header"; else pass "another origin gets no CORS header"; fi
kill $server; wait $server 2>/dev/null

# The chat page in headless chromium (a context long enough that a reply is still running when stopped).
start_server browser --ctx 4096 serve "$model" --port 0 --model-name tiny
if node "$SERVE_WORK/node/browser_test.mjs" "$base" tiny; then pass "chat page in chromium"; else fail "chat page in chromium"; fi
kill $server; wait $server 2>/dev/null

start_server main --ctx 1024 serve "$model" --port 0 --queue 2 --model-name tiny
pass "zinc-rt serve --port 0 listens on $base"

# A second server on the port in use: one line, exit 1; the first one still answers.
port=${base##*:}
"$ZINC_RT" --threads 1 --ctx 256 serve "$model" --port "$port" --model-name other >"$work/second.out" 2>"$work/second.err"
expect "a second serve on port $port exits 1" "$?" 1
if grep -q "Address already in use" "$work/second.err" && [ "$(wc -l <"$work/second.err" | tr -d ' ')" -le 3 ] &&
   ! grep -q "listening" "$work/second.out"; then
  pass "it says the address is in use"; else fail "second serve: $(cat "$work/second.out" "$work/second.err")"; fi
expect "the first server still answers as 'tiny'" "$(curl -s --max-time 10 "$base/v1/models" | field data.0.id)" tiny

# (a) the official openai package
if node "$SERVE_WORK/node/openai_client.mjs" "$base" tiny; then pass "openai package"; else fail "openai package"; fi
# structured output, tool calls, Ollama's API and /metrics, through ajv, openai, NDJSON and a Prometheus parser
if node "$SERVE_WORK/node/features_client.mjs" "$base" tiny; then pass "features"; else fail "features"; fi

# (b) curl
expect "malformed JSON -> 400" "$(post /v1/chat/completions '{"messages": [' "$work/bad.json")" 400
expect "malformed JSON names the problem" "$(field error.type <"$work/bad.json")" invalid_request_error

long=$(printf 'hello %.0s' $(seq 3000))
expect "prompt over the context -> 400" "$(post /v1/completions "{\"prompt\":\"$long\"}" "$work/long.json")" 400
if field error.message <"$work/long.json" | grep -q "maximum context length is 1024 tokens"; then
  pass "the 400 names the limit"; else fail "the 400 names the limit: $(cat "$work/long.json")"; fi
expect "its code" "$(field error.code <"$work/long.json")" context_length_exceeded

expect "unknown model -> 404" \
  "$(post /v1/chat/completions '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}' "$work/model.json")" 404
expect "its code" "$(field error.code <"$work/model.json")" model_not_found

# 8 clients at once against --queue 2: each one is answered, with text or with 429.
for i in $(seq 8); do
  post /v1/completions "{\"prompt\":\"Once upon a time\",\"max_tokens\":48,\"seed\":$i}" "$work/c$i.json" >"$work/c$i.code" &
done
wait $(jobs -p | grep -v "^$server\$")
ok=0 busy=0
for i in $(seq 8); do
  code=$(cat "$work/c$i.code")
  if [ "$code" = 200 ] && [ "$(field object <"$work/c$i.json")" = text_completion ]; then ok=$((ok + 1))
  elif [ "$code" = 429 ] && [ "$(field error.code <"$work/c$i.json")" = rate_limit_exceeded ]; then busy=$((busy + 1))
  else fail "concurrent client $i: $code $(cat "$work/c$i.json")"; fi
done
[ $((ok + busy)) = 8 ] && [ $ok -ge 1 ] && pass "8 concurrent clients: $ok answered, $busy told 429"

# A client that drops mid-stream: its generation (no token limit, end-of-generation tokens
# banned, so it would run to the full context) is cancelled, and the next request is answered.
cancelled_before=$(curl -s "$base/health" | field cancelled)
curl -sN --max-time 60 -H 'Content-Type: application/json' "$base/v1/completions" \
  --data-binary '{"prompt":"Once upon a time","stream":true,"logit_bias":{"1022":-100,"1023":-100}}' | head -c 400 >"$work/dropped.txt"
expect "a request after a dropped stream -> 200" \
  "$(post /v1/completions '{"prompt":"Once upon a time","max_tokens":4}' "$work/next.json")" 200
expect "the dropped stream's generation was cancelled" \
  "$(curl -s "$base/health" | field cancelled)" "$((cancelled_before + 1))"

# Streams carry only whole UTF-8 characters, and say what the whole answer says.
curl -sN --max-time 60 -H 'Content-Type: application/json' "$base/v1/completions" -o "$work/stream.txt" \
  --data-binary '{"prompt":"Once upon a time","max_tokens":64,"seed":11,"stream":true}'
if iconv -f UTF-8 -t UTF-8 "$work/stream.txt" >/dev/null 2>&1; then pass "the event stream is valid UTF-8"
else fail "the event stream is valid UTF-8"; fi
streamed=$(grep '^data: {' "$work/stream.txt" | sed 's/^data: //' |
  node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () =>
    process.stdout.write(s.trim().split("\n").map(l => JSON.parse(l).choices[0].text).join("")))')
post /v1/completions '{"prompt":"Once upon a time","max_tokens":64,"seed":11}' "$work/whole.json" >/dev/null
expect "streamed text equals the whole answer" "$streamed" "$(field choices.0.text <"$work/whole.json")"
grep -v "^$" "$work/stream.txt" | tail -n 1 | grep -qx 'data: \[DONE\]' && pass "the stream ends with [DONE]" || fail "the stream ends with [DONE]"

kill -TERM $server
wait $server
expect "SIGTERM stops the server cleanly" "$?" 0
echo "serve clients: $failures failed"
[ $failures -eq 0 ]
