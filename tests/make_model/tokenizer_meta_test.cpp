// writeTokenizerMetadata writes the tokenizer.ggml.* keys llama.cpp reads, and the vocabulary
// helpers build and pad a valid byte-level BPE vocabulary.
#include <set>

#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/make_model/tokenizer_meta.h"
#include "model/model_error.h"
#include "tests/test_paths.h"

namespace zinc::model {
namespace {

TokenizerData syntheticSpm() {
    TokenizerData t;
    t.kind = TokenizerKind::Spm;
    t.pre = "default";
    t.tokens = {"<unk>", "<s>", "</s>", "\xE2\x96\x81hi"};
    t.scores = {0.0f, 0.0f, 0.0f, -1.5f};
    t.tokenTypes = {2, 3, 3, 1};
    t.unk = 0, t.bos = 1, t.eos = 2;
    t.addBos = true;
    t.chatTemplate = "{{ bos_token }}";
    return t;
}

TEST(TokenizerMetadata, SyntheticSpmVocabularyRoundTrips) {
    TokenizerData t = syntheticSpm();
    padVocabulary(t, 6);
    const std::string path = (test::scratchDir() / "spm.gguf").string();
    {
        GgufWriter w(path);
        w.addString("general.architecture", "llama");
        writeTokenizerMetadata(w, t);
        w.finish();
    }
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->getString("tokenizer.ggml.model"), "llama");
    EXPECT_EQ(f->getString("tokenizer.ggml.pre"), "default");
    EXPECT_EQ(*f->findStringArray("tokenizer.ggml.tokens"),
              (std::vector<std::string>{"<unk>", "<s>", "</s>", "\xE2\x96\x81hi", "[PAD4]", "[PAD5]"}));
    EXPECT_EQ(*f->findF32Array("tokenizer.ggml.scores"), (std::vector<float>{0, 0, 0, -1.5f, -1000, -1000}));
    EXPECT_EQ(*f->findI32Array("tokenizer.ggml.token_type"), (std::vector<int32_t>{2, 3, 3, 1, 5, 5}));
    EXPECT_FALSE(f->has("tokenizer.ggml.merges"));
    EXPECT_EQ(f->getU32("tokenizer.ggml.unknown_token_id"), 0u);
    EXPECT_EQ(f->getU32("tokenizer.ggml.bos_token_id"), 1u);
    EXPECT_EQ(f->getU32("tokenizer.ggml.eos_token_id"), 2u);
    EXPECT_FALSE(f->has("tokenizer.ggml.padding_token_id"));
    EXPECT_EQ(f->findBool("tokenizer.ggml.add_bos_token"), true);
    EXPECT_EQ(f->findBool("tokenizer.ggml.add_space_prefix"), true);
    EXPECT_EQ(f->getString("tokenizer.chat_template"), "{{ bos_token }}");
    const TokenizerData back = TokenizerData::fromGguf(*f);
    EXPECT_EQ(back.tokens, t.tokens);
    EXPECT_EQ(back.bos, 1);
}

TEST(TokenizerMetadata, InconsistentDataIsRejected) {
    const std::string path = (test::scratchDir() / "bad-tokenizer.gguf").string();
    GgufWriter w(path);
    TokenizerData t = syntheticSpm();
    t.scores.pop_back();
    EXPECT_THROW(writeTokenizerMetadata(w, t), ModelError);
    t = syntheticSpm();
    t.eos = 9;
    EXPECT_THROW(writeTokenizerMetadata(w, t), ModelError);
}

TEST(TokenizerMetadata, BuiltInVocabularyIsValidBpe) {
    const TokenizerData t = builtinByteLevelTokenizer("qwen2");
    EXPECT_EQ(t.kind, TokenizerKind::Bpe);
    EXPECT_EQ(t.tokens.size(), 256u + 702 + 2);
    EXPECT_EQ(t.tokenTypes.size(), t.tokens.size());
    const std::set<std::string> vocab(t.tokens.begin(), t.tokens.end());
    EXPECT_EQ(vocab.size(), t.tokens.size());  // no duplicates
    for (const auto& merge : t.merges) {
        const auto space = merge.find(' ');
        ASSERT_NE(space, std::string::npos) << merge;
        const std::string left = merge.substr(0, space), right = merge.substr(space + 1);
        EXPECT_TRUE(vocab.count(left) && vocab.count(right) && vocab.count(left + right)) << merge;
    }
    EXPECT_EQ(t.tokens[t.bos], "<|bos|>");
    EXPECT_EQ(t.tokens[t.eos], "<|eos|>");
    EXPECT_FALSE(t.addBos);
    EXPECT_TRUE(builtinByteLevelTokenizer("llama-bpe").addBos);
    EXPECT_EQ(builtinByteLevelTokenizer("qwen2", 10).merges.size(), 10u);
}

}  // namespace
}  // namespace zinc::model
