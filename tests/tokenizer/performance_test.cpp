// Encoding a few KB must take milliseconds and building the 151k-token Qwen3 tokenizer well
// under a second. Bounds are loose (shared CI machines); the printed times are the real check.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/tokenizer/test_support.h"

namespace zinc::test {
namespace {

using Clock = std::chrono::steady_clock;

double millisecondsOf(const std::function<void()>& f) {
    const auto start = Clock::now();
    f();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Best of three, so a descheduled run does not fail the test.
double bestMillisecondsOf(const std::function<void()>& f) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) best = std::min(best, millisecondsOf(f));
    return best;
}

std::string mixedText(size_t bytes) {
    const std::string paragraph =
        "The quick brown fox jumps over the lazy dog. It's 2024; prices rose 3.5% (again!). "
        "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～ нещо на Български. "
        "    indented code: for (int i = 0; i < n; ++i) { sum += a[i]; }\n\n";
    std::string text;
    while (text.size() < bytes) text += paragraph;
    return text;
}

const model::Tokenizer& byName(const std::string& name) {
    if (name == "qwen3") return qwen3Tokenizer();
    return ggufTokenizer("models/llama.cpp-vocab/ggml-vocab-" + name + ".gguf");
}

TEST(Performance, EncodesFourKilobytesInMilliseconds) {
    const std::string text = mixedText(4096);
    for (const std::string name : {"llama-spm", "gpt-2", "qwen3"}) {
        const auto& tok = byName(name);
        size_t n = 0;
        const double ms = bestMillisecondsOf([&] { n = tok.encode(text, true, true).size(); });
        std::printf("[ %s: %zu bytes -> %zu tokens in %.2f ms ]\n", name.c_str(), text.size(), n, ms);
        EXPECT_LT(ms, 50.0) << name;
    }
}

TEST(Performance, LongWordsAndRunsStayFast) {
    // One 64 KB "word" (BPE merges inside a single pre-token; SPM over the whole text) and a
    // 64 KB whitespace run exercise the merge queues and the regex without splitting help.
    const std::string word(65536, 'a');
    const std::string spaces(65536, ' ');
    for (const std::string name : {"llama-spm", "gpt-2", "qwen3"}) {
        const auto& tok = byName(name);
        const double ms = millisecondsOf([&] {
            tok.encode(word, false, false);
            tok.encode(spaces, false, false);
        });
        std::printf("[ %s: 2 x 64 KB pathological input in %.1f ms ]\n", name.c_str(), ms);
        EXPECT_LT(ms, 2000.0) << name;
    }
}

TEST(Performance, BuildsQwen3TokenizerWellUnderASecond) {
    const auto& data = qwen3TokenizerData();  // parsing tokenizer.json is not part of this
    const double ms = bestMillisecondsOf([&] { model::Tokenizer tok(data); });
    std::printf("[ qwen3: Tokenizer from %zu tokens / %zu merges in %.1f ms ]\n", data.tokens.size(),
                data.merges.size(), ms);
    EXPECT_LT(ms, 1000.0);
}

}  // namespace
}  // namespace zinc::test
