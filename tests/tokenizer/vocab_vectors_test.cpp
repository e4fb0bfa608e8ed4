// llama.cpp's tokenizer test vectors (tests/test-tokenizer-0): every input must give exactly
// the expected ids. test-tokenizer-0 calls common_tokenize(ctx, text, add_special = false,
// parse_special = false), and so do these tests.
#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/make_model/make_model.h"
#include "tests/test_paths.h"
#include "tests/tokenizer/test_support.h"

namespace zinc::test {
namespace {

constexpr const char* kVocabDir = "models/llama.cpp-vocab/";

std::string showIds(const std::vector<int32_t>& ids) {
    std::string s;
    for (int32_t id : ids) s += std::to_string(id) + " ";
    return s;
}

// Runs all vectors of `vectorName` against `tokenizer`; returns how many passed.
size_t expectAllVectorsPass(const model::Tokenizer& tokenizer, const std::string& vectorName) {
    const auto vectors = readVocabVectors(sharedPath(kVocabDir + vectorName + ".inp"),
                                          sharedPath(kVocabDir + vectorName + ".out"));
    EXPECT_FALSE(vectors.empty());
    size_t passed = 0;
    for (const auto& v : vectors) {
        const auto ids = tokenizer.encode(v.text, /*addSpecial=*/false, /*parseSpecial=*/false);
        EXPECT_EQ(ids, v.ids) << vectorName << ": input '" << v.text << "'\n  expected " << showIds(v.ids)
                              << "\n  got      " << showIds(ids);
        passed += ids == v.ids;
    }
    ::testing::Test::RecordProperty("vectors", static_cast<int>(vectors.size()));
    std::printf("[ %s: %zu/%zu vectors ]\n", vectorName.c_str(), passed, vectors.size());
    return passed;
}

TEST(VocabVectors, LlamaSpm) {
    const auto& tok = ggufTokenizer(std::string(kVocabDir) + "ggml-vocab-llama-spm.gguf");
    EXPECT_EQ(tok.kind(), model::TokenizerKind::Spm);
    EXPECT_EQ(expectAllVectorsPass(tok, "ggml-vocab-llama-spm.gguf"), 46u);
}

TEST(VocabVectors, Phi3Spm) {
    const auto& tok = ggufTokenizer(std::string(kVocabDir) + "ggml-vocab-phi-3.gguf");
    EXPECT_EQ(tok.kind(), model::TokenizerKind::Spm);
    EXPECT_EQ(expectAllVectorsPass(tok, "ggml-vocab-phi-3.gguf"), 46u);
}

TEST(VocabVectors, Gpt2Bpe) {
    const auto& tok = ggufTokenizer(std::string(kVocabDir) + "ggml-vocab-gpt-2.gguf");
    EXPECT_EQ(tok.kind(), model::TokenizerKind::Bpe);
    EXPECT_EQ(tok.pre(), "gpt-2");
    EXPECT_EQ(expectAllVectorsPass(tok, "ggml-vocab-gpt-2.gguf"), 46u);
}

// The qwen2 vocab GGUF is not available; Qwen3's tokenizer.json has the same vocabulary and
// pre-tokenizer (the README checked that every expected sequence decodes back to its input).
TEST(VocabVectors, Qwen2VectorsWithQwen3TokenizerJson) {
    const auto& tok = qwen3Tokenizer();
    EXPECT_EQ(tok.kind(), model::TokenizerKind::Bpe);
    EXPECT_EQ(tok.pre(), "qwen2");
    EXPECT_EQ(expectAllVectorsPass(tok, "ggml-vocab-qwen2.gguf"), 46u);
}

// The same vectors through the GGUF route: make-model writes the Qwen3 tokenizer.json into a
// GGUF file, and the tokenizer read back from that file must still pass them all.
TEST(VocabVectors, Qwen2VectorsWithMakeModelGguf) {
    model::MakeModelOptions options;
    options.preset = "qwen3-tiny";
    options.quantMix = "q8_0";
    options.outputPath = (scratchDir() / "qwen3-tiny-with-qwen3-tokenizer.gguf").string();
    options.tokenizerJson = sharedPath("models/qwen3-tokenizer/tokenizer.json.gz");
    options.tokenizerConfigJson = sharedPath("models/qwen3-tokenizer/tokenizer_config.json");
    options.progress = false;
    model::makeModel(options);
    const auto file = model::GgufFile::open(options.outputPath);
    const model::Tokenizer tok(model::TokenizerData::fromGguf(*file));
    EXPECT_EQ(tok.pre(), "qwen2");
    EXPECT_EQ(expectAllVectorsPass(tok, "ggml-vocab-qwen2.gguf"), 46u);
    EXPECT_TRUE(tok.isEndOfGeneration(tok.findToken("<|im_end|>")));
}

}  // namespace
}  // namespace zinc::test
