#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test, then the hostile-input
# tests again under AddressSanitizer + UndefinedBehaviorSanitizer. CI runs exactly this.
set -uo pipefail
cd "$(dirname "$0")"
./bootstrap.sh || exit 1
[ -f build/build.ninja ] || meson setup build --buildtype=release || exit 1
ninja -C build || exit 1
meson test -C build --no-rebuild --print-errorlogs --num-processes 2 "$@" | tee build/test-summary.txt
status=${PIPESTATUS[0]}

# Bad GGUF files and arbitrary tokenizer input under the sanitizers (the model layer only, to
# keep CI short; the whole suite under sanitizers is `meson setup -Db_sanitize=address,undefined`).
sanitized_status=0
if [ $# -eq 0 ]; then
  [ -f build-asan/build.ninja ] ||
    meson setup build-asan --buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false || exit 1
  ninja -C build-asan tests/gguf/gguf_tests tests/tokenizer/tokenizer_tests || exit 1
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 2 gguf tokenizer |
    tee build-asan/test-summary.txt
  sanitized_status=${PIPESTATUS[0]}
fi

# One plain closing line for CI: "N passed, N failed".
count() { grep -hE "^$1: +[0-9]+" build/test-summary.txt build-asan/test-summary.txt 2>/dev/null | awk '{s += $2} END {print s + 0}'; }
passed=$(count Ok)
failed=$(( $(count Fail) + $(count Timeout) ))
echo "$passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$sanitized_status" -eq 0 ]
