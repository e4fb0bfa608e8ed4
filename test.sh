#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")"
./bootstrap.sh
[ -f build/build.ninja ] || meson setup build --buildtype=release
ninja -C build
status=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || status=$?
# One plain closing line for CI: "N passed, N failed".
log=build/meson-logs/testlog.txt
passed=$(grep -cE '^ *[0-9]+/[0-9]+ .* OK ' "$log" || true)
failed=$(grep -cE '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR) ' "$log" || true)
echo "$passed passed, $failed failed"
exit $status
