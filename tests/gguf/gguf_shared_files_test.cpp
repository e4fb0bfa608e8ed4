// Every GGUF in ../shared/models parses, and known facts about each hold.
#include <filesystem>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_print.h"
#include "tests/test_paths.h"

namespace zinc::model {
namespace {

std::unique_ptr<GgufFile> openShared(const std::string& relative) {
    return GgufFile::open(test::sharedPath("models/" + relative));
}

std::map<GgmlType, int> typeCounts(const GgufFile& f) {
    std::map<GgmlType, int> counts;
    for (const auto& t : f.tensors()) ++counts[t.type];
    return counts;
}

TEST(GgufSharedFiles, EveryModelAndVocabFileParses) {
    int parsed = 0;
    for (const char* dir : {"models", "models/llama.cpp-vocab"}) {
        for (const auto& entry : std::filesystem::directory_iterator(test::sharedPath(dir))) {
            if (entry.path().extension() != ".gguf") continue;
            SCOPED_TRACE(entry.path().string());
            auto f = GgufFile::open(entry.path().string());
            EXPECT_GE(f->version(), 2u);
            EXPECT_TRUE(f->has("general.architecture"));
            for (const auto& t : f->tensors()) {
                const auto& first = f->tensors()[0];
                EXPECT_EQ(t.data - first.data, static_cast<ptrdiff_t>(t.offset - first.offset)) << t.name;
                EXPECT_EQ(t.offset % f->alignment(), 0u) << t.name;
                EXPECT_LE(f->dataOffset() + t.offset + t.nbytes, f->fileSize()) << t.name;
            }
            std::ostringstream dump;
            printGguf(*f, dump);
            EXPECT_NE(dump.str().find("general.architecture"), std::string::npos);
            ++parsed;
        }
    }
    EXPECT_GE(parsed, 9);
}

TEST(GgufSharedFiles, Stories260KIsA5LayerF32Llama) {
    auto f = openShared("stories260K.gguf");
    EXPECT_EQ(f->version(), 3u);
    EXPECT_EQ(f->tensors().size(), 48u);
    EXPECT_EQ(typeCounts(*f), (std::map<GgmlType, int>{{GgmlType::F32, 48}}));
    EXPECT_EQ(f->getString("general.architecture"), "llama");
    EXPECT_EQ(f->getU32("llama.block_count"), 5u);
    EXPECT_EQ(f->getU64("llama.embedding_length"), 64u);
    EXPECT_FLOAT_EQ(f->getF32("llama.attention.layer_norm_rms_epsilon"), 1e-5f);
    EXPECT_EQ(f->findStringArray("tokenizer.ggml.tokens")->size(), 512u);
    EXPECT_EQ(f->findF32Array("tokenizer.ggml.scores")->size(), 512u);
    EXPECT_EQ(f->findI32Array("tokenizer.ggml.token_type")->at(1), 3);  // <s> is CONTROL
    const auto& embd = f->tensor("token_embd.weight");
    EXPECT_EQ(embd.nDims, 2u);
    EXPECT_EQ(embd.ne[0], 64u);
    EXPECT_EQ(embd.ne[1], 512u);
    EXPECT_EQ(embd.nbytes, 64u * 512 * 4);
    EXPECT_EQ(f->fileSize(), 1185376u);
}

TEST(GgufSharedFiles, TinyQwen3Q8HasTiedEmbeddings) {
    auto f = openShared("tiny-qwen3-q8_0.gguf");
    EXPECT_EQ(f->getString("general.architecture"), "qwen3");
    EXPECT_EQ(f->findTensor("output.weight"), nullptr);
    EXPECT_NE(f->findTensor("token_embd.weight"), nullptr);
    EXPECT_EQ(typeCounts(*f), (std::map<GgmlType, int>{{GgmlType::F32, 9}, {GgmlType::Q8_0, 15}}));
    EXPECT_EQ(f->getU32("qwen3.vocab_size"), 512u);
    EXPECT_FALSE(f->has("tokenizer.ggml.tokens"));
}

TEST(GgufSharedFiles, Qwen3TinyHasEveryWeightType) {
    auto f = openShared("qwen3-tiny.gguf");
    const auto counts = typeCounts(*f);
    for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_0, GgmlType::F16, GgmlType::F32})
        EXPECT_GT(counts.count(t), 0u) << ggmlTypeName(t);
    EXPECT_EQ(f->getU32("qwen3.block_count"), 4u);
    EXPECT_EQ(f->getU32("qwen3.attention.key_length"), 64u);
    EXPECT_EQ(f->tensor("blk.0.attn_q.weight").type, GgmlType::Q4_K);
    EXPECT_EQ(f->tensor("blk.0.ffn_down.weight").ne[0], 768u);
    EXPECT_EQ(f->tensor("blk.0.ffn_down.weight").ne[1], 256u);
    EXPECT_EQ(f->getString("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(f->findStringArray("tokenizer.ggml.merges")->size(), 766u);
}

TEST(GgufSharedFiles, Qwen3MoeTinyHasThreeDimensionalExperts) {
    auto f = openShared("qwen3moe-tiny.gguf");
    EXPECT_EQ(f->getU32("qwen3moe.expert_count"), 8u);
    const auto& gate = f->tensor("blk.0.ffn_gate_exps.weight");
    EXPECT_EQ(gate.nDims, 3u);
    EXPECT_EQ(gate.ne[0], 256u);
    EXPECT_EQ(gate.ne[2], 8u);
    EXPECT_EQ(gate.nbytes, 256u / 256 * 144 * 256 * 8);
    EXPECT_EQ(f->tensor("blk.0.ffn_gate_inp.weight").type, GgmlType::F32);
}

TEST(GgufSharedFiles, VocabOnlyFilesHaveNoTensors) {
    auto gpt2 = openShared("llama.cpp-vocab/ggml-vocab-gpt-2.gguf");
    EXPECT_TRUE(gpt2->tensors().empty());
    EXPECT_EQ(gpt2->findStringArray("tokenizer.ggml.tokens")->size(), 50257u);
    EXPECT_EQ(gpt2->getString("tokenizer.ggml.model"), "gpt2");
    auto phi3 = openShared("llama.cpp-vocab/ggml-vocab-phi-3.gguf");
    EXPECT_EQ(phi3->findBool("tokenizer.ggml.add_bos_token"), true);
    EXPECT_EQ(phi3->getU32("tokenizer.ggml.eos_token_id"), 32000u);
    EXPECT_NE(phi3->getString("tokenizer.chat_template").find("bos_token"), std::string::npos);
}

TEST(GgufSharedFiles, GettersNameKeyAndTypesOnMismatch) {
    auto f = openShared("stories260K.gguf");
    const auto message = [&](auto&& fn) -> std::string {
        try {
            fn();
        } catch (const GgufError& e) {
            return e.what();
        }
        return "no error";
    };
    const std::string wrongType = message([&] { f->getString("llama.block_count"); });
    EXPECT_NE(wrongType.find("llama.block_count"), std::string::npos) << wrongType;
    EXPECT_NE(wrongType.find("UINT32"), std::string::npos) << wrongType;
    EXPECT_NE(wrongType.find("expected STRING"), std::string::npos) << wrongType;
    EXPECT_NE(message([&] { f->getU32("no.such.key"); }).find("missing required key no.such.key"), std::string::npos);
    EXPECT_NE(message([&] { f->tensor("nope"); }).find("missing tensor nope"), std::string::npos);
    EXPECT_NE(message([&] { f->findI32Array("tokenizer.ggml.tokens"); }).find("ARRAY[STRING]"), std::string::npos);
    EXPECT_NE(message([&] { f->getF32("general.name"); }).find("expected FLOAT32"), std::string::npos);
    // padding_token_id is 0xffffffff: fits UINT32 and UINT64.
    EXPECT_EQ(f->getU64("tokenizer.ggml.padding_token_id"), 0xffffffffu);
    EXPECT_FALSE(f->findU32("no.such.key").has_value());
}

}  // namespace
}  // namespace zinc::model
