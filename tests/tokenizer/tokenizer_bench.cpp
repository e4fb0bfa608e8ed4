// tokenizer_bench: how long the tokenizers take, as JSON (not a test: results/tokenizer.md).
// Per vocabulary (llama-spm, gpt-2 from llama.cpp's vocab files; Qwen3's 151k BPE): 4 KB of
// mixed text, a 64 KB single word and a 64 KB whitespace run (the merge queues' worst cases);
// and building the Qwen3 tokenizer from its parsed data. Best of five runs, wall clock.
// Usage: tokenizer_bench (from the build folder, like the tests: ../../shared holds the data).
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "tests/tokenizer/test_support.h"

namespace {

using zinc::model::Tokenizer;

double bestMilliseconds(const std::function<void()>& f, int runs = 5) {
    double best = 1e300;
    for (int i = 0; i < runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

}  // namespace

int main() {
    const std::string mixed = zinc::test::mixedText(4096), word(65536, 'a'), spaces(65536, ' ');
    std::printf("{\n  \"encode\": [\n");
    const char* names[] = {"llama-spm", "gpt-2", "qwen3"};
    for (int i = 0; i < 3; ++i) {
        const std::string name = names[i];
        const Tokenizer& tok = name == "qwen3" ? zinc::test::qwen3Tokenizer()
                                               : zinc::test::ggufTokenizer("models/llama.cpp-vocab/ggml-vocab-" + name + ".gguf");
        size_t tokens = 0;
        const double mixedMs = bestMilliseconds([&] { tokens = tok.encode(mixed, true, true).size(); });
        const double wordMs = bestMilliseconds([&] { tok.encode(word, false, false); }, 3);
        const double spacesMs = bestMilliseconds([&] { tok.encode(spaces, false, false); }, 3);
        std::printf("    {\"vocab\": \"%s\", \"mixed_bytes\": %zu, \"mixed_tokens\": %zu, \"mixed_ms\": %.3f, "
                    "\"word_64k_ms\": %.2f, \"spaces_64k_ms\": %.2f}%s\n",
                    name.c_str(), mixed.size(), tokens, mixedMs, wordMs, spacesMs, i < 2 ? "," : "");
    }
    const auto& data = zinc::test::qwen3TokenizerData();
    const double buildMs = bestMilliseconds([&] { Tokenizer tok(data); }, 3);
    std::printf("  ],\n  \"qwen3_build\": {\"tokens\": %zu, \"merges\": %zu, \"ms\": %.2f}\n}\n", data.tokens.size(),
                data.merges.size(), buildMs);
}
