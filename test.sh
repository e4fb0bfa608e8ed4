#!/usr/bin/env bash
# The whole test suite, as CI runs it: install what is missing, build everything with
# AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/: -O1, the tests' own code and the
# CLI front end -O0 (meson.build: glue_overrides), no debug info, assertions on;
# a unity build, 8 files a compile: CLI11, nlohmann::json and httplib cost 10 s a file each under
# the sanitizers, so on CI's 2 cores this takes ~9.5 min instead of ~15; build/, the release build,
# compiles file by file and so keeps each file's includes honest)
# and run every test there, leaks checked at the exit of every test process and zinc-rt run;
# then the fuzz targets for a bounded number of executions (tests/fuzz/run.sh, clang-19).
# The release build (build/) is for demo.sh and benchmarks, not needed here:
#   ./test.sh                 CI: sanitized suite, then the fuzzers
#   ./test.sh SUITE...        only those meson test suites, sanitized (no fuzzing)
#   ./test.sh --release ...   the suite in the release build instead (no sanitizers, no fuzzing)
set -uo pipefail
cd "$(dirname "$0")"
./bootstrap.sh || exit 1

build=build-asan
if [ "${1:-}" = "--release" ]; then
  shift
  build=build
  [ -f build/build.ninja ] || meson setup build --buildtype=release || exit 1
else
  [ -f build-asan/build.ninja ] ||
    meson setup build-asan --buildtype=plain -Doptimization=1 -Db_sanitize=address,undefined -Db_lundef=false \
      -Dunity=on -Dunity_size=8 || exit 1
fi
ninja -C $build || exit 1
meson test -C $build --no-rebuild --print-errorlogs --num-processes 2 "$@" | tee $build/test-summary.txt
status=${PIPESTATUS[0]}

fuzz_status=0
rm -f $build/fuzz-summary.txt
if [ $# -eq 0 ] && [ $build = build-asan ]; then
  ZINC_RT=build-asan/tools/zinc-rt tests/fuzz/run.sh | tee $build/fuzz-summary.txt
  fuzz_status=${PIPESTATUS[0]}
fi

# One plain closing line for CI: "N passed, N failed".
count() { grep -hE "^$1: +[0-9]+" $build/test-summary.txt $build/fuzz-summary.txt 2>/dev/null | awk '{s += $2} END {print s + 0}'; }
passed=$(count Ok)
failed=$(( $(count Fail) + $(count Timeout) ))
echo "$passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$fuzz_status" -eq 0 ]
