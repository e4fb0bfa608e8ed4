// TokenizerData from GGUF keys and from tokenizer.json: defaults, accepted forms, and errors
// that name the file and the key or value at fault.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <functional>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/model_error.h"
#include "tests/test_paths.h"
#include "tests/tokenizer/test_support.h"

namespace zinc::test {
namespace {

using model::GgufFile;
using model::GgufWriter;
using model::ModelError;
using model::TokenizerData;
using model::TokenizerKind;

// A vocab-only GGUF with the keys `fill` adds.
std::string writeGguf(const std::string& name, const std::function<void(GgufWriter&)>& fill) {
    const std::string path = (scratchDir() / name).string();
    GgufWriter writer(path);
    writer.addString("general.architecture", "llama");
    fill(writer);
    writer.writeHeader();
    writer.finish();
    return path;
}

void addSpmVocab(GgufWriter& w) {
    w.addString("tokenizer.ggml.model", "llama");
    w.addStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "\xE2\x96\x81" "a"});
    w.addF32Array("tokenizer.ggml.scores", {0, 0, 0, -1, -2, -0.5f});
    w.addI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1});
}

void addBpeVocab(GgufWriter& w, const std::string& pre) {
    w.addString("tokenizer.ggml.model", "gpt2");
    if (!pre.empty()) w.addString("tokenizer.ggml.pre", pre);
    w.addStringArray("tokenizer.ggml.tokens", {"a", "b", "ab", "\xC4\xA0", "<|endoftext|>"});
    w.addI32Array("tokenizer.ggml.token_type", {1, 1, 1, 1, 3});
    w.addStringArray("tokenizer.ggml.merges", {"a b"});
}

TokenizerData load(const std::string& path) { return TokenizerData::fromGguf(*GgufFile::open(path)); }

// Runs `f`, expecting a ModelError whose message contains every one of `needles`.
void expectError(const std::function<void()>& f, std::initializer_list<std::string> needles) {
    try {
        f();
        ADD_FAILURE() << "expected ModelError";
    } catch (const ModelError& e) {
        for (const auto& needle : needles) EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(FromGguf, SpmDefaultsAreLlamaCpps) {
    const auto data = load(writeGguf("spm-defaults.gguf", addSpmVocab));
    EXPECT_EQ(data.kind, TokenizerKind::Spm);
    EXPECT_EQ(data.unk, 0);
    EXPECT_EQ(data.bos, 1);
    EXPECT_EQ(data.eos, 2);
    EXPECT_TRUE(data.addBos);
    EXPECT_FALSE(data.addEos);
    EXPECT_TRUE(data.addSpacePrefix);
    const model::Tokenizer tok(data);
    EXPECT_EQ(tok.encode("a", true, false), (std::vector<int32_t>{1, 5}));
}

TEST(FromGguf, SpmKeysOverrideDefaults) {
    const auto data = load(writeGguf("spm-keys.gguf", [](GgufWriter& w) {
        addSpmVocab(w);
        w.addBool("tokenizer.ggml.add_bos_token", false);
        w.addBool("tokenizer.ggml.add_space_prefix", false);
        w.addU32("tokenizer.ggml.padding_token_id", 0xFFFFFFFFu);  // "none", as llama2.c files say
        w.addI32("tokenizer.ggml.eot_token_id", 2);
        w.addString("tokenizer.chat_template", "{{ '[INST]' }}");
    }));
    EXPECT_FALSE(data.addBos);
    EXPECT_FALSE(data.addSpacePrefix);
    EXPECT_EQ(data.pad, -1);
    EXPECT_EQ(data.eot, 2);
    EXPECT_EQ(data.chatTemplate, "{{ '[INST]' }}");
    EXPECT_EQ(model::Tokenizer(data).encode("a", true, false), (std::vector<int32_t>{4}));
}

TEST(FromGguf, Gpt2AddsNoBosUnlessAsked) {
    const auto data = load(writeGguf("gpt2.gguf", [](GgufWriter& w) { addBpeVocab(w, "gpt-2"); }));
    EXPECT_EQ(data.kind, TokenizerKind::Bpe);
    EXPECT_FALSE(data.addBos);
    EXPECT_FALSE(data.addSpacePrefix);
    EXPECT_EQ(model::Tokenizer(data).encode("ab", true, false), (std::vector<int32_t>{2}));

    const auto asked = load(writeGguf("gpt2-bos.gguf", [](GgufWriter& w) {
        addBpeVocab(w, "gpt-2");
        w.addU32("tokenizer.ggml.bos_token_id", 4);
        w.addBool("tokenizer.ggml.add_bos_token", true);
    }));
    EXPECT_EQ(model::Tokenizer(asked).encode("ab", true, false), (std::vector<int32_t>{4, 2}));
}

TEST(FromGguf, Llama3PreAddsBosByDefault) {
    const auto data = load(writeGguf("llama-bpe.gguf", [](GgufWriter& w) {
        addBpeVocab(w, "llama-bpe");
        w.addU32("tokenizer.ggml.bos_token_id", 4);
    }));
    EXPECT_TRUE(data.addBos);
}

TEST(FromGguf, DefaultPreIsGpt2) {
    const auto data = load(writeGguf("no-pre.gguf", [](GgufWriter& w) { addBpeVocab(w, ""); }));
    EXPECT_EQ(data.pre, "default");
    EXPECT_EQ(model::Tokenizer(data).encode("ab a", false, false), (std::vector<int32_t>{2, 3, 0}));
}

TEST(FromGguf, UnknownPreThrowsNamingIt) {
    const auto path = writeGguf("deepseek.gguf", [](GgufWriter& w) { addBpeVocab(w, "deepseek-llm"); });
    expectError([&] { load(path); }, {path, "deepseek-llm", "tokenizer.ggml.pre"});
}

TEST(FromGguf, UnsupportedModelThrowsNamingIt) {
    const auto path = writeGguf("bert.gguf", [](GgufWriter& w) {
        w.addString("tokenizer.ggml.model", "bert");
        w.addStringArray("tokenizer.ggml.tokens", {"[PAD]"});
    });
    expectError([&] { load(path); }, {path, "unsupported tokenizer model 'bert'", "tokenizer.ggml.model"});
}

TEST(FromGguf, MissingTokenizerThrows) {
    const auto path = writeGguf("no-tokenizer.gguf", [](GgufWriter&) {});
    expectError([&] { load(path); }, {path, "tokenizer.ggml.model"});
}

TEST(FromGguf, ScoresOfOtherLengthThrow) {
    const auto path = writeGguf("bad-scores.gguf", [](GgufWriter& w) {
        w.addString("tokenizer.ggml.model", "llama");
        w.addStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"});
        w.addF32Array("tokenizer.ggml.scores", {0, 0});
    });
    expectError([&] { load(path); }, {path, "tokenizer.ggml.scores", "2 entries for 3 tokens"});
}

TEST(FromGguf, BpeWithoutMergesThrows) {
    const auto path = writeGguf("no-merges.gguf", [](GgufWriter& w) {
        w.addString("tokenizer.ggml.model", "gpt2");
        w.addStringArray("tokenizer.ggml.tokens", {"a"});
    });
    expectError([&] { load(path); }, {path, "tokenizer.ggml.merges"});
}

TEST(FromGguf, DuplicateTokensThrow) {
    TokenizerData data;
    data.tokens = {"<unk>", "<s>", "</s>", "x", "x"};
    expectError([&] { model::Tokenizer tok(data); }, {"duplicate token", "'x'", "3 and 4"});
}

TEST(FromGguf, SharedVocabFiles) {
    const auto spm = load(sharedPath("models/llama.cpp-vocab/ggml-vocab-llama-spm.gguf"));
    EXPECT_EQ(spm.tokens.size(), 32000u);
    EXPECT_TRUE(spm.addBos);
    const auto gpt2 = load(sharedPath("models/llama.cpp-vocab/ggml-vocab-gpt-2.gguf"));
    EXPECT_EQ(gpt2.bos, 50256);
    EXPECT_EQ(gpt2.eos, 50256);
    EXPECT_FALSE(gpt2.addBos);
    EXPECT_EQ(gpt2.merges.size(), 50000u);
    const auto stories = load(sharedPath("models/stories260K.gguf"));
    EXPECT_TRUE(stories.addBos) << "SPM adds BOS when the file does not say";
    EXPECT_EQ(stories.pad, -1) << "padding_token_id 0xFFFFFFFF means none";
}

// ---- tokenizer.json -------------------------------------------------------------------

std::string writeText(const std::string& name, const std::string& text, bool gzip = false) {
    const std::string path = (scratchDir() / name).string();
    if (gzip) {
        gzFile f = gzopen(path.c_str(), "wb");
        gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
        gzclose(f);
    } else {
        std::ofstream(path, std::ios::binary) << text;
    }
    return path;
}

// A tiny byte-level BPE in Llama 3 style: Split regex + ByteLevel, a BOS post-processor.
std::string tinyTokenizerJson(const std::string& merges) {
    return R"({
  "added_tokens": [
    {"id": 5, "content": "<|begin_of_text|>", "special": true},
    {"id": 6, "content": "<tool>", "special": false},
    {"id": 7, "content": "<|reserved|>", "special": false}
  ],
  "normalizer": null,
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]},
  "model": {"type": "BPE", "ignore_merges": true,
    "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3, "\u0120ab": 4},
    "merges": )" + merges + R"(}
})";
}

TEST(FromHfTokenizerJson, BothMergeFormsGiveTheSameData) {
    const auto strings = TokenizerData::fromHfTokenizerJson(
        writeText("strings.json", tinyTokenizerJson(R"(["a b", "Ġ ab"])")));
    const auto pairs = TokenizerData::fromHfTokenizerJson(
        writeText("pairs.json.gz", tinyTokenizerJson(R"([["a", "b"], ["Ġ", "ab"]])"), true));
    EXPECT_EQ(strings.merges, (std::vector<std::string>{"a b", "\xC4\xA0 ab"}));
    EXPECT_EQ(pairs.merges, strings.merges);
    EXPECT_EQ(pairs.tokens, strings.tokens);
    EXPECT_EQ(strings.pre, "llama-bpe");
    EXPECT_EQ(strings.kind, TokenizerKind::Bpe);
}

TEST(FromHfTokenizerJson, AddedTokensAndPostProcessor) {
    const auto data = TokenizerData::fromHfTokenizerJson(writeText("tiny.json", tinyTokenizerJson(R"(["a b", "Ġ ab"])")));
    ASSERT_EQ(data.tokens.size(), 8u);
    EXPECT_EQ(data.tokenTypes[0], static_cast<int32_t>(model::TokenType::Normal));
    EXPECT_EQ(data.tokenTypes[5], static_cast<int32_t>(model::TokenType::Control));      // special
    EXPECT_EQ(data.tokenTypes[6], static_cast<int32_t>(model::TokenType::UserDefined));  // not special
    EXPECT_EQ(data.tokenTypes[7], static_cast<int32_t>(model::TokenType::Control))
        << "<|...|> looks special: controlled as convert_hf_to_gguf.py does";
    EXPECT_EQ(data.bos, 5);
    EXPECT_TRUE(data.addBos);
    const model::Tokenizer tok(data);
    EXPECT_EQ(tok.encode("ab ab<tool>", true, false), (std::vector<int32_t>{5, 2, 4, 6}));
}

TEST(FromHfTokenizerJson, ConfigGivesSpecialTokensAndTemplate) {
    const auto json = writeText("cfg-tok.json", tinyTokenizerJson(R"(["a b"])"));
    const auto config = writeText("cfg.json", R"({
      "add_bos_token": false, "add_eos_token": false,
      "bos_token": {"content": "<|begin_of_text|>", "lstrip": false},
      "eos_token": "<|reserved|>", "pad_token": null,
      "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})");
    const auto data = TokenizerData::fromHfTokenizerJson(json, config);
    EXPECT_EQ(data.bos, 5);
    EXPECT_EQ(data.eos, 7);
    EXPECT_EQ(data.pad, -1);
    EXPECT_FALSE(data.addBos);
    EXPECT_EQ(data.chatTemplate, "D");
}

TEST(FromHfTokenizerJson, ConfigTokenMissingFromVocabThrows) {
    const auto json = writeText("cfg2-tok.json", tinyTokenizerJson(R"(["a b"])"));
    const auto config = writeText("cfg2.json", R"({"eos_token": "</s>"})");
    expectError([&] { TokenizerData::fromHfTokenizerJson(json, config); }, {config, "eos_token", "'</s>'"});
}

TEST(FromHfTokenizerJson, UnsupportedModelTypeThrows) {
    const auto path = writeText("unigram.json", R"({"model": {"type": "Unigram", "vocab": []}})");
    expectError([&] { TokenizerData::fromHfTokenizerJson(path); }, {path, "Unigram"});
}

TEST(FromHfTokenizerJson, UnknownSplitRegexThrows) {
    std::string text = tinyTokenizerJson(R"(["a b"])");
    text.replace(text.find("\\\\p{N}{1,3}"), 11, "\\\\p{N}{1,4}");
    const auto path = writeText("odd-regex.json", text);
    expectError([&] { TokenizerData::fromHfTokenizerJson(path); }, {path, "unsupported pre-tokenizer regex", "{1,4}"});
}

TEST(FromHfTokenizerJson, MetaspaceTokenizerIsNotByteLevel) {
    const auto path = writeText("metaspace.json", R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "_"},
        "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})");
    expectError([&] { TokenizerData::fromHfTokenizerJson(path); }, {path, "Metaspace"});
}

TEST(FromHfTokenizerJson, UnreadableOrInvalidFilesNameThePath) {
    const std::string missing = (scratchDir() / "does-not-exist.json").string();
    expectError([&] { TokenizerData::fromHfTokenizerJson(missing); }, {missing, "cannot open"});
    const auto broken = writeText("broken.json", "{\"model\": ");
    expectError([&] { TokenizerData::fromHfTokenizerJson(broken); }, {broken, "invalid JSON"});
    const auto truncated = writeText("truncated.json.gz", tinyTokenizerJson("[]"), true);
    std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) - 20);
    expectError([&] { TokenizerData::fromHfTokenizerJson(truncated); }, {truncated});
}

TEST(FromHfTokenizerJson, Qwen3Import) {
    const auto& data = qwen3TokenizerData();
    EXPECT_EQ(data.kind, TokenizerKind::Bpe);
    EXPECT_EQ(data.pre, "qwen2");
    EXPECT_EQ(data.tokens.size(), 151669u);
    EXPECT_EQ(data.merges.size(), 151387u);
    EXPECT_EQ(data.tokens[151644], "<|im_start|>");
    EXPECT_EQ(data.tokenTypes[151644], static_cast<int32_t>(model::TokenType::Control));
    EXPECT_EQ(data.tokenTypes[151667], static_cast<int32_t>(model::TokenType::UserDefined));  // <think>
    EXPECT_EQ(data.tokenTypes[151659], static_cast<int32_t>(model::TokenType::Control));      // <|fim_prefix|>
    EXPECT_EQ(data.bos, -1);
    EXPECT_EQ(data.eos, 151645);
    EXPECT_EQ(data.pad, 151643);
    EXPECT_FALSE(data.addBos);
    EXPECT_NE(data.chatTemplate.find("enable_thinking"), std::string::npos);
}

}  // namespace
}  // namespace zinc::test
