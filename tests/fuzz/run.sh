#!/usr/bin/env bash
# The fuzz targets of tests/fuzz: built with clang-19 + libFuzzer + ASan/UBSan in build-fuzz/,
# seeded from ../shared and from what the main build produced, then run.
#
#   tests/fuzz/run.sh                      every target, bounded (the execution counts of
#                                          tests/fuzz/meson.build, fixed seed): what CI runs
#   tests/fuzz/run.sh --time 3600 [NAME..] each target (or the named ones) for 3600 s; the
#                                          corpus grows in build-fuzz/tests/fuzz/corpus/NAME
#   tests/fuzz/run.sh --runs 1000000 --jobs 2 [NAME..]
#                                          each target for that many executions in all, split
#                                          over J libFuzzer jobs, every target at once (so
#                                          targets x J cores); prints each target's executions
#                                          and crash inputs (results/fuzzing.md)
#
# ZINC_FUZZ_PREBUILT=1 skips the build and keeps seeds already in build-fuzz/tests/fuzz/seeds
# (for running the binaries on another machine).
#
# ZINC_RT (default build-asan/tools/zinc-rt, else build/tools/zinc-rt) writes the PM4 seeds;
# code-object seeds are the kernels that build compiled. A crash leaves its input in
# build-fuzz/tests/fuzz/artifacts/; turn it into a regression test in the area's gtest suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=build-fuzz
out=$build/tests/fuzz
shared=${ZINC_SHARED:-$root/../shared}

seconds=0
runs=0
jobs=1
if [ "${1:-}" = "--time" ]; then
  seconds=$2
  shift 2
elif [ "${1:-}" = "--runs" ]; then
  runs=$2
  shift 2
  if [ "${1:-}" = "--jobs" ]; then
    jobs=$2
    shift 2
  fi
fi
prebuilt=${ZINC_FUZZ_PREBUILT:-0}

if [ "$prebuilt" = 1 ]; then
  :
elif [ ! -f $build/build.ninja ]; then
  CXX=clang++-19 meson setup $build -Dfuzz=true -Dtests=disabled --buildtype=plain -Doptimization=1 \
    -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args=-gline-tables-only >/dev/null
fi
[ "$prebuilt" = 1 ] || ninja -C $build fuzz

first_built() {
  for f in "$@"; do [ -f "$f" ] && { echo "$f"; return; }; done
  return 0
}
zinc_rt=${ZINC_RT:-$(first_built build-asan/tools/zinc-rt build/tools/zinc-rt)}

# Seed corpora, one function per target that has more than tests/fuzz/seeds/NAME: each writes
# into the folder it is given.
seeds_gguf() {
  cp "$shared/models/tiny-qwen3-q8_0.gguf" "$1/"  # a whole model, 117 KB
  for m in stories260K qwen3-tiny qwen3moe-tiny llama-2-tiny-random; do
    head -c 32768 "$shared/models/$m.gguf" >"$1/$m-head.gguf"  # header, metadata, tokenizer
  done
}
seeds_tokenizer() {
  # llama.cpp's tokenizer test inputs, each behind a mode byte choosing tokenizer and flags.
  python3 - "$shared/models/llama.cpp-vocab" "$1" <<'EOF'
import pathlib, sys
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
texts = []
for inp in sorted(src.glob('*.inp')):
    texts += inp.read_bytes().split(b'\n__ggml_vocab_test__\n')
for i, text in enumerate(t for t in texts if t):
    (dst / f'text-{i}').write_bytes(bytes([i % 6 | (i % 4) << 3]) + text)
EOF
}
seeds_chat_template() {
  python3 - "$shared/models/qwen3-tokenizer/tokenizer_config.json" "$1" <<'EOF'
import json, pathlib, sys
template = json.loads(pathlib.Path(sys.argv[1]).read_text())['chat_template'].encode()
turns = b'\0s\0You are kind.\0u\0Hello\0a\0<think>\nhm\n</think>\n\nHi!\0t\0{"ok":1}\0u\0Bye'
dst = pathlib.Path(sys.argv[2])
for name, t in [('qwen3', template), ('llama3', b'<|start_header_id|><|end_header_id|>'),
                ('gemma', b'<start_of_turn>'), ('phi3', b'<|user|><|end|>'), ('llama2', b'[INST]'),
                ('unknown', b'{% for m in messages %}{{ m.content }}{% endfor %}')]:
    (dst / name).write_bytes(t + turns)
EOF
}
pm4_dump=""
seeds_pm4() {
  [ -n "$zinc_rt" ] || { echo "run.sh: no zinc-rt built: PM4 targets start without seeds" >&2; return 0; }
  if [ -z "$pm4_dump" ]; then  # once per run: the IBs and ring of a few tokens on the simulated GPU
    pm4_dump=$(mktemp -d)
    "$zinc_rt" --tier=kfd --sim --dump-pm4 "$pm4_dump" run "$shared/models/stories260K.gguf" -p "Once upon" -n 3 \
      >/dev/null 2>&1 || echo "run.sh: $zinc_rt could not dump PM4 seeds" >&2
  fi
  if compgen -G "$pm4_dump/*.pm4" >/dev/null; then tests/fuzz/split_pm4.py "$1" "$pm4_dump"/*.pm4; fi
}
seeds_pm4_decoder() { seeds_pm4 "$1"; }
seeds_pm4_executor() { seeds_pm4 "$1"; }
seeds_code_object() {
  local obj
  for obj in {build-asan,build}/kernels/zinc_kernels_gfx1{100,201}.hsaco {build-asan,build}/tests/kernels/refused_kernels.hsaco; do
    [ -f "$obj" ] && cp "$obj" "$1/"
  done
  return 0
}

targets=()
for exe in "$out"/fuzz_*; do
  [ -f "$exe" ] && [ -x "$exe" ] && targets+=("$(basename "$exe" | sed 's/^fuzz_//')")
done
[ $# -gt 0 ] && targets=("$@")

mkdir -p "$out/artifacts"
for name in "${targets[@]}"; do
  if [ "$prebuilt" = 1 ] && [ -d "$out/seeds/$name" ]; then continue; fi
  rm -rf "$out/seeds/$name"
  mkdir -p "$out/seeds/$name" "$out/corpus/$name"
  if declare -F "seeds_$name" >/dev/null; then "seeds_$name" "$out/seeds/$name"; fi
done
[ -n "$pm4_dump" ] && rm -rf "$pm4_dump"

export ZINC_SHARED=$shared
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
if [ "$seconds" -eq 0 ] && [ "$runs" -eq 0 ]; then
  # Bounded: a fresh corpus each time, so the same executions run on every machine.
  for name in "${targets[@]}"; do
    rm -rf "$out/corpus/$name" "$out/artifacts/$name-"*
    mkdir -p "$out/corpus/$name"
  done
  suites=()
  [ $# -gt 0 ] && for name in "${targets[@]}"; do suites+=("fuzz_$name"); done
  meson test -C $build --no-rebuild --print-errorlogs --num-processes 2 --suite fuzz "${suites[@]}"
elif [ "$runs" -gt 0 ]; then
  # Every target at once, each split over $jobs jobs of runs/jobs executions; libFuzzer writes
  # each job's log (with its final stats) as fuzz-N.log in the target's log folder.
  per=$(( (runs + jobs - 1) / jobs ))
  for name in "${targets[@]}"; do
    extra=()
    [ -d "tests/fuzz/seeds/$name" ] && extra+=("$root/tests/fuzz/seeds/$name")
    rm -rf "$out/logs/$name" "$out/artifacts/$name-"*
    mkdir -p "$out/logs/$name"
    (cd "$out/logs/$name" && "$root/$out/fuzz_$name" -runs=$per -jobs=$jobs -workers=$jobs -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$root/$out/artifacts/$name-" \
       "$root/$out/corpus/$name" "$root/$out/seeds/$name" "${extra[@]}" >/dev/null 2>&1) &
  done
  wait
  status=0
  for name in "${targets[@]}"; do
    executed=$(cat "$out/logs/$name"/fuzz-*.log 2>/dev/null | sed -n 's/^stat::number_of_executed_units: *//p' |
               awk '{s += $1} END {print s + 0}')
    crashes=$(find "$out/artifacts" -name "$name-*" 2>/dev/null | wc -l)
    echo "$name: $executed executions in $jobs jobs, $crashes crash inputs"
    [ "$executed" -ge "$runs" ] && [ "$crashes" -eq 0 ] || status=1
  done
  exit $status
else
  status=0
  for name in "${targets[@]}"; do
    extra=()
    [ -d "tests/fuzz/seeds/$name" ] && extra+=("tests/fuzz/seeds/$name")
    "$out/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/$name-" "$out/corpus/$name" "$out/seeds/$name" "${extra[@]}" || status=1
  done
  exit $status
fi
