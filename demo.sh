#!/usr/bin/env bash
# The main job: install what is missing, build, and generate text. Uses the trained
# TinyStories model from ../shared/models when it is there, otherwise a model written by
# `zinc-rt make-model` (random weights: the text is gibberish, the pipeline is real).
# Arguments go to `zinc-rt run` (default: -p "Once upon a time" -n 200), e.g.
# ./demo.sh -p "The dragon" -n 64
set -euo pipefail
cd "$(dirname "$0")"
./bootstrap.sh
[ -f build/build.ninja ] || meson setup build --buildtype=release
ninja -C build tools/zinc-rt
model=../shared/models/stories260K.gguf
if [ ! -f "$model" ]; then
  model=build/demo-qwen3-tiny.gguf
  [ -f "$model" ] || build/tools/zinc-rt make-model --preset qwen3-tiny --quant q8_0 -o "$model"
fi
[ $# -gt 0 ] || set -- -p "Once upon a time" -n 200
exec build/tools/zinc-rt run "$model" "$@"
