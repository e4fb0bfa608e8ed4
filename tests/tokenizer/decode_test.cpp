// Decoding: pieces, whole sequences, round trips, and the streaming decoder's promise that
// every chunk it returns is valid UTF-8.
#include <gtest/gtest.h>

#include <random>

#include "model/model_error.h"
#include "model/tokenizer/utf8.h"
#include "tests/test_paths.h"
#include "tests/tokenizer/test_support.h"

namespace zinc::test {
namespace {

struct Named {
    const char* name;
    const model::Tokenizer& (*get)();
    const char* vectors;
};

const model::Tokenizer& llamaSpm() { return ggufTokenizer("models/llama.cpp-vocab/ggml-vocab-llama-spm.gguf"); }
const model::Tokenizer& phi3() { return ggufTokenizer("models/llama.cpp-vocab/ggml-vocab-phi-3.gguf"); }
const model::Tokenizer& gpt2() { return ggufTokenizer("models/llama.cpp-vocab/ggml-vocab-gpt-2.gguf"); }
const model::Tokenizer& qwen3() { return qwen3Tokenizer(); }

const Named kTokenizers[] = {
    {"llama_spm", &llamaSpm, "ggml-vocab-llama-spm.gguf"},
    {"phi3", &phi3, "ggml-vocab-phi-3.gguf"},
    {"gpt2", &gpt2, "ggml-vocab-gpt-2.gguf"},
    {"qwen3", &qwen3, "ggml-vocab-qwen2.gguf"},
};

class PerTokenizer : public ::testing::TestWithParam<Named> {
protected:
    const model::Tokenizer& tok() const { return GetParam().get(); }
    std::vector<VocabVector> vectors() const {
        const std::string base = std::string("models/llama.cpp-vocab/") + GetParam().vectors;
        return readVocabVectors(sharedPath(base + ".inp"), sharedPath(base + ".out"));
    }
};

// Every vector survives encode -> decode unchanged: SPM through byte fallback and the
// stripped space prefix, byte-level BPE because its alphabet covers every byte.
TEST_P(PerTokenizer, DecodeOfEncodeIsIdentity) {
    for (const auto& v : vectors()) {
        EXPECT_EQ(tok().decode(tok().encode(v.text, false, false), true), v.text);
        EXPECT_EQ(tok().decode(tok().encode(v.text, true, false), true), v.text) << "with BOS";
    }
}

// Feeding the expected ids one by one (emoji, CJK and Khmer come as partial byte tokens)
// must never emit invalid UTF-8, and the chunks must add up to decode().
TEST_P(PerTokenizer, StreamingEmitsOnlyValidUtf8AndMatchesDecode) {
    size_t heldBack = 0;
    for (const auto& v : vectors()) {
        model::StreamingDecoder stream(tok());
        std::string all;
        for (int32_t id : v.ids) {
            const std::string chunk = stream.push(id);
            EXPECT_TRUE(isValidUtf8(chunk)) << "chunk after id " << id << " of '" << v.text << "'";
            heldBack += chunk.empty() && !tok().tokenToPiece(id).empty();
            all += chunk;
        }
        const std::string rest = stream.finish();
        EXPECT_TRUE(rest.empty()) << "complete text leaves nothing behind";
        all += rest;
        EXPECT_EQ(all, tok().decode(v.ids, true));
        EXPECT_EQ(all, v.text);
    }
    EXPECT_GT(heldBack, 0u) << "the vectors contain characters split over several tokens";
}

// Arbitrary bytes never crash the encoder, and arbitrary ids never crash the decoders.
TEST_P(PerTokenizer, ArbitraryInputNeverCrashes) {
    std::mt19937 rng(1234);
    for (int round = 0; round < 200; ++round) {
        std::string text(rng() % 64, '\0');
        for (char& c : text) c = static_cast<char>(rng() & 0xFF);
        const auto ids = tok().encode(text, true, round % 2 == 0);
        for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok().vocabSize());
        // SPM keeps every byte (byte fallback); byte-level BPE turns invalid UTF-8 into U+FFFD.
        const std::string decoded = tok().decode(ids, true);
        if (tok().kind() == model::TokenizerKind::Bpe) {
            EXPECT_TRUE(isValidUtf8(decoded));
        }
        std::vector<int32_t> junk(16);
        for (int32_t& id : junk) id = static_cast<int32_t>(rng());
        junk.push_back(-1);
        junk.push_back(tok().vocabSize());
        (void)tok().decode(junk, round % 2 == 0);
        model::StreamingDecoder stream(tok(), round % 2 == 0);
        std::string streamed;
        for (int32_t id : junk) streamed += stream.push(id);
        streamed += stream.finish();
        EXPECT_TRUE(isValidUtf8(streamed));
    }
}

INSTANTIATE_TEST_SUITE_P(Vocabs, PerTokenizer, ::testing::ValuesIn(kTokenizers),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Decode, SpmPieces) {
    const auto& tok = llamaSpm();
    EXPECT_EQ(tok.tokenToPiece(15043), " Hello");  // "▁Hello"
    EXPECT_EQ(tok.tokenToPiece(13), "\n");         // "<0x0A>"
    EXPECT_EQ(tok.tokenToPiece(1), "");            // <s> is a control token
    EXPECT_EQ(tok.tokenToPiece(1, true), "<s>");
    EXPECT_EQ(tok.tokenToPiece(0), "");            // <unk>
    EXPECT_EQ(tok.tokenToPiece(-1), "");
    EXPECT_EQ(tok.tokenToPiece(tok.vocabSize()), "");
    const std::vector<int32_t> ids = {1, 15043, 3186};  // <s> Hello world
    EXPECT_EQ(tok.decode(ids, true), "Hello world");
    EXPECT_EQ(tok.decode(ids, false), "<s> Hello world");
}

TEST(Decode, BytePieces) {
    const auto& tok = gpt2();
    EXPECT_EQ(tok.tokenText(18435), "\xC4\xA0Hello");  // "ĠHello"
    EXPECT_EQ(tok.tokenToPiece(18435), " Hello");
    EXPECT_EQ(tok.tokenToPiece(198), "\n");            // "Ċ"
    EXPECT_EQ(tok.tokenToPiece(50256), "");
    EXPECT_EQ(tok.tokenToPiece(50256, true), "<|endoftext|>");
}

TEST(Decode, TokenTextOutOfRangeThrows) {
    EXPECT_THROW(llamaSpm().tokenText(-1), model::ModelError);
    EXPECT_THROW(llamaSpm().tokenText(32000), model::ModelError);
}

TEST(Decode, StreamingHoldsBackPartialCharacters) {
    const auto& tok = llamaSpm();
    // "🦙" has no token in Llama 2's vocabulary: it comes as four byte tokens.
    const auto ids = tok.encode("🦙!", false, false);
    ASSERT_EQ(ids, (std::vector<int32_t>{29871, 243, 162, 169, 156, 29991}));
    model::StreamingDecoder stream(tok);
    EXPECT_EQ(stream.push(29871), "");  // the space prefix, stripped at the start of the text
    EXPECT_EQ(stream.push(243), "");
    EXPECT_EQ(stream.push(162), "");
    EXPECT_EQ(stream.push(169), "");
    EXPECT_EQ(stream.push(156), "🦙");
    EXPECT_EQ(stream.push(29991), "!");
    EXPECT_EQ(stream.finish(), "");
}

TEST(Decode, StreamingReplacesUnfinishedCharacters) {
    const auto& tok = llamaSpm();
    model::StreamingDecoder stream(tok);
    EXPECT_EQ(stream.push(243), "");   // <0xF0>
    EXPECT_EQ(stream.push(162), "");   // <0x9F>
    EXPECT_EQ(stream.finish(), "\xEF\xBF\xBD");  // one U+FFFD for the cut-off character
    // A lead byte followed by something that cannot continue it.
    EXPECT_EQ(stream.push(243), "");
    EXPECT_EQ(stream.push(29991), "\xEF\xBF\xBD!");
    // A stray continuation byte is replaced at once.
    EXPECT_EQ(stream.push(159), "\xEF\xBF\xBD");  // <0x9C>
}

TEST(Decode, StreamingAfterPromptKeepsLeadingSpace) {
    const auto& tok = llamaSpm();
    model::StreamingDecoder atStart(tok, true, /*atTextStart=*/true);
    model::StreamingDecoder continuing(tok, true, /*atTextStart=*/false);
    EXPECT_EQ(atStart.push(15043), "Hello");
    EXPECT_EQ(continuing.push(15043), " Hello");
}

TEST(Decode, Utf8Helpers) {
    using model::utf8::incompleteTailLength;
    using model::utf8::sanitize;
    using model::utf8::Substitution;
    EXPECT_EQ(incompleteTailLength("abc"), 0u);
    EXPECT_EQ(incompleteTailLength("a\xF0\x9F"), 2u);
    EXPECT_EQ(incompleteTailLength("a\xF0\x9F\xA6"), 3u);
    EXPECT_EQ(incompleteTailLength("a\xF0\x9F\xA6\x99"), 0u);
    EXPECT_EQ(incompleteTailLength("a\xE4"), 1u);
    EXPECT_EQ(incompleteTailLength("a\xED\xA0"), 0u) << "a surrogate can never complete";
    EXPECT_EQ(incompleteTailLength("a\x9F"), 0u);
    EXPECT_EQ(sanitize("a\xF0\x9F" "b", Substitution::PerByte), "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
    EXPECT_EQ(sanitize("a\xF0\x9F" "b", Substitution::MaximalSubpart), "a\xEF\xBF\xBD" "b");
    EXPECT_EQ(sanitize("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "overlong forms are invalid";
    EXPECT_EQ(sanitize("ok \xE2\x9C\x85"), "ok \xE2\x9C\x85");
}

TEST(Accessors, Qwen3SpecialTokens) {
    const auto& tok = qwen3();
    EXPECT_EQ(tok.vocabSize(), 151669);
    EXPECT_EQ(tok.bos(), -1);
    EXPECT_EQ(tok.eos(), 151645);  // <|im_end|>, from tokenizer_config.json
    EXPECT_EQ(tok.eot(), 151645);
    EXPECT_EQ(tok.pad(), 151643);
    EXPECT_FALSE(tok.addsBos());
    EXPECT_TRUE(tok.isEndOfGeneration(151643));  // <|endoftext|>
    EXPECT_TRUE(tok.isEndOfGeneration(151645));  // <|im_end|>
    EXPECT_FALSE(tok.isEndOfGeneration(151644));  // <|im_start|>
    EXPECT_EQ(tok.endOfGenerationIds(), (std::vector<int32_t>{151643, 151645}));
    EXPECT_TRUE(tok.isControl(151644));
    EXPECT_FALSE(tok.isControl(151667));  // <think> is user-defined: printed, and split out always
    EXPECT_EQ(tok.tokenToPiece(151667), "<think>");
    EXPECT_EQ(tok.encode("a<think>b", false, false), (std::vector<int32_t>{64, 151667, 65}));
    // Control tokens are text unless parseSpecial.
    EXPECT_EQ(tok.encode("<|im_end|>", false, true), (std::vector<int32_t>{151645}));
    EXPECT_GT(tok.encode("<|im_end|>", false, false).size(), 1u);
}

TEST(Accessors, Phi3EndOfTurn) {
    const auto& tok = phi3();
    EXPECT_EQ(tok.eos(), 32000);  // <|endoftext|>
    EXPECT_EQ(tok.eot(), 32007);  // <|end|>
    EXPECT_TRUE(tok.isEndOfGeneration(32000));
    EXPECT_TRUE(tok.isEndOfGeneration(32007));
    EXPECT_FALSE(tok.isEndOfGeneration(32010));  // <|user|>
}

TEST(Accessors, SpmSpacePrefixAfterSpecialTokens) {
    // llama.cpp adds the SPM space prefix to every text run that follows a special token.
    const auto& tok = phi3();
    EXPECT_EQ(tok.encode("<|user|>Hi", false, true), (std::vector<int32_t>{32010, 6324}));  // "▁Hi"
    EXPECT_EQ(tok.encode("Hi", true, false), (std::vector<int32_t>{1, 6324}));
}

}  // namespace
}  // namespace zinc::test
