// make-model end to end: generated files read back through GgufFile (keys, shapes, types,
// sizes, tied vs untied), reproducibility per seed and thread count, tokenizers, and errors.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/make_model/make_model.h"
#include "model/make_model/model_preset.h"
#include "model/make_model/quant_mix.h"
#include "model/make_model/tensor_plan.h"
#include "model/model.h"
#include "model/model_error.h"
#include "model/tokenizer/tokenizer_data.h"
#include "tests/test_paths.h"

#if __has_include("model/quant/dequantize.h")
#include "model/quant/dequantize.h"
#define ZINC_HAVE_DEQUANTIZE 1
#endif

namespace zinc::model {
namespace {

std::string makeTo(const std::string& name, MakeModelOptions o) {
    o.outputPath = (test::scratchDir() / name).string();
    o.progress = false;
    makeModel(o);
    return o.outputPath;
}

MakeModelOptions options(const std::string& preset, const std::string& mix, uint64_t seed = 0) {
    MakeModelOptions o;
    o.preset = preset;
    o.quantMix = mix;
    o.seed = seed;
    return o;
}

std::vector<char> fileBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void expectShape(const GgufTensorInfo& t, std::vector<uint64_t> ne) {
    ASSERT_EQ(t.nDims, ne.size()) << t.name;
    for (size_t d = 0; d < ne.size(); ++d) EXPECT_EQ(t.ne[d], ne[d]) << t.name << " ne[" << d << "]";
}

TEST(MakeModel, TinyPresetRoundTripsThroughTheReader) {
    const std::string path = makeTo("qwen3-tiny.gguf", options("qwen3-tiny", "q4_k_m"));
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->getString("general.architecture"), "qwen3");
    EXPECT_EQ(f->getU32("qwen3.block_count"), 4u);
    EXPECT_EQ(f->getU32("qwen3.embedding_length"), 256u);
    EXPECT_EQ(f->getU32("qwen3.feed_forward_length"), 768u);
    EXPECT_EQ(f->getU32("qwen3.attention.head_count"), 4u);
    EXPECT_EQ(f->getU32("qwen3.attention.head_count_kv"), 2u);
    EXPECT_EQ(f->getU32("qwen3.attention.key_length"), 64u);
    EXPECT_EQ(f->getU32("qwen3.attention.value_length"), 64u);
    EXPECT_EQ(f->getU32("qwen3.context_length"), 40960u);
    EXPECT_FLOAT_EQ(f->getF32("qwen3.rope.freq_base"), 1e6f);
    EXPECT_FLOAT_EQ(f->getF32("qwen3.attention.layer_norm_rms_epsilon"), 1e-6f);
    EXPECT_EQ(f->getU32("general.file_type"), 15u);
    EXPECT_EQ(f->findStringArray("tokenizer.ggml.tokens")->size(), 1024u);

    // Same key names as the shared model written by an independent script.
    auto reference = GgufFile::open(test::sharedPath("models/qwen3-tiny.gguf"));
    for (const auto& [key, value] : reference->metadata()) EXPECT_TRUE(f->has(key)) << key;
    ASSERT_EQ(f->tensors().size(), reference->tensors().size());
    for (const auto& ref : reference->tensors()) {
        const auto& t = f->tensor(ref.name);
        expectShape(t, std::vector<uint64_t>(ref.ne.begin(), ref.ne.begin() + ref.nDims));
    }

    const auto preset = *findModelPreset("qwen3-tiny");
    const auto mix = *findQuantMix("q4_k_m");
    for (const auto& planned : planTensors(preset)) {
        const auto& t = f->tensor(planned.name);
        EXPECT_EQ(t.type, chooseTensorType(mix, planned, preset)) << t.name;
        EXPECT_EQ(t.nbytes, rowBytes(t.type, t.ne[0]) * t.ne[1] * t.ne[2] * t.ne[3]);
    }
    EXPECT_EQ(f->tensor("output.weight").type, GgmlType::Q6_K);
    EXPECT_EQ(f->tensor("blk.2.attn_v.weight").type, GgmlType::Q6_K);  // use_more_bits(2, 4)
    EXPECT_EQ(f->tensor("blk.1.ffn_down.weight").type, GgmlType::Q4_K);
}

TEST(MakeModel, MoeAndLlamaPresets) {
    auto moe = GgufFile::open(makeTo("moe.gguf", options("qwen3moe-tiny", "q8_0")));
    EXPECT_EQ(moe->getU32("qwen3moe.expert_count"), 8u);
    EXPECT_EQ(moe->getU32("qwen3moe.expert_used_count"), 2u);
    EXPECT_EQ(moe->getU32("qwen3moe.expert_feed_forward_length"), 256u);
    expectShape(moe->tensor("blk.3.ffn_down_exps.weight"), {256, 256, 8});
    EXPECT_EQ(moe->tensor("blk.3.ffn_down_exps.weight").type, GgmlType::Q8_0);
    EXPECT_EQ(moe->tensor("blk.3.ffn_gate_inp.weight").type, GgmlType::F32);

    auto llama = GgufFile::open(makeTo("llama.gguf", options("llama-tiny", "f16")));
    EXPECT_EQ(llama->getString("general.architecture"), "llama");
    EXPECT_EQ(llama->getU32("llama.rope.dimension_count"), 32u);
    EXPECT_EQ(llama->findTensor("blk.0.attn_q_norm.weight"), nullptr);
    EXPECT_EQ(llama->tensor("blk.0.attn_k.weight").type, GgmlType::F16);
    EXPECT_EQ(llama->findBool("tokenizer.ggml.add_bos_token"), true);
}

// The qwen35moe hybrid: DeltaNet and gated-attention layers as llama.cpp's loader binds them,
// the Q4_K_M steps (attn_qkv Q5_K; ffn_down with its shared-expert counter), F32 conv and
// decay tensors with a negative ssm_a, and the file loads as a qwen35moe model.
TEST(MakeModel, Qwen35MoeHybridPreset) {
    const std::string path = makeTo("qwen35moe.gguf", options("qwen35moe-tiny", "q4_k_m"));
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->getString("general.architecture"), "qwen35moe");
    EXPECT_EQ(f->getU32("qwen35moe.full_attention_interval"), 4u);
    EXPECT_EQ(f->getU32("qwen35moe.ssm.inner_size"), 256u);
    EXPECT_EQ(f->getU32("qwen35moe.rope.dimension_count"), 32u);
    expectShape(f->tensor("blk.0.attn_qkv.weight"), {256, 512});
    expectShape(f->tensor("blk.3.attn_q.weight"), {256, 1024});
    EXPECT_EQ(f->findTensor("blk.3.attn_qkv.weight"), nullptr);
    EXPECT_EQ(f->tensor("blk.0.attn_qkv.weight").type, GgmlType::Q5_K);
    EXPECT_EQ(f->tensor("blk.0.ssm_conv1d.weight").type, GgmlType::F32);
    EXPECT_EQ(f->tensor("blk.0.ffn_gate_inp_shexp.weight").type, GgmlType::F32);
    EXPECT_EQ(f->tensor("blk.0.ffn_down_exps.weight").type, GgmlType::Q6_K);   // counter 0 of 8
    EXPECT_EQ(f->tensor("blk.1.ffn_down_exps.weight").type, GgmlType::Q4_K);   // counter 2 of 8
    EXPECT_EQ(f->tensor("blk.3.ffn_down_shexp.weight").type, GgmlType::Q6_K);  // counter 7 of 8
    const auto& a = f->tensor("blk.0.ssm_a");
    for (int i = 0; i < 4; ++i) EXPECT_LT(reinterpret_cast<const float*>(a.data)[i], 0.0f) << "ssm_a[" << i << "]";
    auto m = Model::load(path);
    EXPECT_TRUE(m->config().hybrid.recurrent(2));
    EXPECT_EQ(m->config().hybrid.sharedFf, 512);
}

// gemma3-tiny in each new mix: the shared gemma3-tiny.gguf's keys and tensor shapes, the
// gemma3 keys the loader reads (window, linear scaling of the global layers), and the file loads.
TEST(MakeModel, GemmaTinyPresetInTheNewMixes) {
    auto reference = GgufFile::open(test::sharedPath("models/gemma3-tiny.gguf"));
    for (const char* mix : {"q2_k", "q3_k_m", "iq4_xs"}) {
        SCOPED_TRACE(mix);
        const std::string path = makeTo(std::string("gemma3-") + mix + ".gguf", options("gemma3-tiny", mix));
        auto f = GgufFile::open(path);
        ASSERT_EQ(f->tensors().size(), reference->tensors().size());
        for (const auto& ref : reference->tensors())
            expectShape(f->tensor(ref.name), std::vector<uint64_t>(ref.ne.begin(), ref.ne.begin() + ref.nDims));
        EXPECT_EQ(f->getU32("gemma3.attention.sliding_window"), 8u);
        EXPECT_EQ(f->getString("gemma3.rope.scaling.type"), "linear");
        auto m = Model::load(path);
        EXPECT_EQ(m->config().slidingWindow, 8);
        EXPECT_TRUE(m->config().slidingLayer(4));
        EXPECT_FALSE(m->config().slidingLayer(5));
        EXPECT_EQ(m->config().headDim, 32);
    }
    EXPECT_EQ(GgufFile::open(makeTo("gemma3-q2_k.gguf", options("gemma3-tiny", "q2_k")))->tensor("blk.0.ffn_gate.weight").type,
              GgmlType::Q2_K);
}

TEST(MakeModel, SameSeedSameBytesOtherSeedDiffers) {
    MakeModelOptions a = options("qwen3moe-tiny", "q4_k_m", 7);
    a.threads = 1;
    MakeModelOptions b = a;
    b.threads = 3;
    const auto bytesA = fileBytes(makeTo("seed7-1thread.gguf", a));
    const auto bytesB = fileBytes(makeTo("seed7-3threads.gguf", b));
    const auto bytesC = fileBytes(makeTo("seed8.gguf", options("qwen3moe-tiny", "q4_k_m", 8)));
    EXPECT_GT(bytesA.size(), 1000000u);
    EXPECT_TRUE(bytesA == bytesB);
    ASSERT_EQ(bytesA.size(), bytesC.size());
    EXPECT_FALSE(bytesA == bytesC);
}

TEST(MakeModel, BuiltInVocabularyReadsBackAsATokenizer) {
    auto f = GgufFile::open(makeTo("vocab.gguf", options("qwen3-tiny", "q8_0")));
    const TokenizerData t = TokenizerData::fromGguf(*f);
    EXPECT_EQ(t.kind, TokenizerKind::Bpe);
    EXPECT_EQ(t.pre, "qwen2");
    ASSERT_EQ(t.tokens.size(), 1024u);
    EXPECT_EQ(t.tokens[' '], "\xC4\xA0");  // GPT-2 byte symbol of the space: U+0120
    EXPECT_EQ(t.tokens['a'], "a");
    EXPECT_EQ(t.tokens[t.bos], "<|bos|>");
    EXPECT_EQ(t.tokenTypes[t.eos], static_cast<int32_t>(TokenType::Control));
    EXPECT_EQ(t.tokens[1023], "[PAD1023]");
    EXPECT_EQ(t.tokenTypes[1023], static_cast<int32_t>(TokenType::Unused));
    EXPECT_EQ(t.merges.size(), 702u);
    EXPECT_EQ(t.merges[0], "\xC4\xA0 e");
}

// A real preset cut to one layer, with the Qwen3 tokenizer.json: tied embeddings, overrides,
// the vocabulary padded to 151936 as HF conversions pad it.
TEST(MakeModel, RealPresetWithQwenTokenizer) {
    MakeModelOptions o = options("qwen3-0.6b", "q4_k_m");
    o.layers = 1;
    o.contextLength = 4096;
    o.tokenizerJson = test::sharedPath("models/qwen3-tokenizer/tokenizer.json.gz");
    o.tokenizerConfigJson = test::sharedPath("models/qwen3-tokenizer/tokenizer_config.json");
    const std::string path = makeTo("qwen3-0.6b-1layer.gguf", o);
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->findTensor("output.weight"), nullptr);
    const auto& embd = f->tensor("token_embd.weight");
    EXPECT_EQ(embd.type, GgmlType::Q6_K);
    expectShape(embd, {1024, 151936});
    EXPECT_EQ(f->getU32("qwen3.block_count"), 1u);
    EXPECT_EQ(f->getU32("qwen3.context_length"), 4096u);
    EXPECT_EQ(f->findTensor("blk.1.attn_q.weight"), nullptr);
    expectShape(f->tensor("blk.0.attn_q.weight"), {1024, 2048});
    expectShape(f->tensor("blk.0.attn_output.weight"), {2048, 1024});

    const auto tokens = *f->findStringArray("tokenizer.ggml.tokens");
    ASSERT_EQ(tokens.size(), 151936u);
    EXPECT_EQ(tokens[151645], "<|im_end|>");
    EXPECT_EQ(tokens[151935], "[PAD151935]");
    const auto types = *f->findI32Array("tokenizer.ggml.token_type");
    EXPECT_EQ(types.at(151935), static_cast<int32_t>(TokenType::Unused));
    EXPECT_EQ(types.at(151645), static_cast<int32_t>(TokenType::Control));
    EXPECT_EQ(f->getU32("tokenizer.ggml.eos_token_id"), 151645u);
    EXPECT_EQ(f->getU32("tokenizer.ggml.padding_token_id"), 151643u);
    EXPECT_EQ(f->findStringArray("tokenizer.ggml.merges")->size(), 151387u);
    EXPECT_NE(f->getString("tokenizer.chat_template").find("<|im_start|>"), std::string::npos);
    EXPECT_EQ(f->getString("tokenizer.ggml.pre"), "qwen2");
    f.reset();
    std::filesystem::remove(path);
}

TEST(MakeModel, ErrorsNameTheProblem) {
    auto message = [](MakeModelOptions o) -> std::string {
        o.outputPath = (test::scratchDir() / "error.gguf").string();
        o.progress = false;
        try {
            makeModel(o);
        } catch (const ModelError& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_NE(message(options("qwen9", "q4_k_m")).find("unknown preset 'qwen9'; known: qwen3-0.6b"), std::string::npos);
    EXPECT_NE(message(options("qwen3-tiny", "q3_k")).find("unknown quant mix 'q3_k'"), std::string::npos);
    MakeModelOptions zeroLayers = options("qwen3-tiny", "q8_0");
    zeroLayers.layers = 0;
    EXPECT_NE(message(zeroLayers).find("layers"), std::string::npos);
    MakeModelOptions badTokenizer = options("qwen3-tiny", "q8_0");
    badTokenizer.tokenizerJson = "/nonexistent/tokenizer.json";
    EXPECT_NE(message(badTokenizer).find("/nonexistent/tokenizer.json"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(test::scratchDir() / "error.gguf"));
    EXPECT_EQ(makeModelPresets().size(), makeModelPresetChoices().size());
    EXPECT_GE(makeModelQuantMixes().size(), 6u);
}

#ifdef ZINC_HAVE_DEQUANTIZE
double rmsOf(const GgufTensorInfo& t, int64_t rows) {
    std::vector<float> v(static_cast<size_t>(t.ne[0] * rows));
    dequantizeRow(t.type, t.data, v.data(), static_cast<int64_t>(v.size()));
    double sumSq = 0;
    for (float x : v) sumSq += static_cast<double>(x) * x;
    return std::sqrt(sumSq / static_cast<double>(v.size()));
}
#endif

TEST(MakeModel, GeneratedTensorsHaveTheirScale) {
#ifndef ZINC_HAVE_DEQUANTIZE
    GTEST_SKIP() << "model/quant/dequantize.h has not landed yet";
#else
    auto f = GgufFile::open(makeTo("scale.gguf", options("qwen3-tiny", "q4_k_m", 3)));
    for (const char* name : {"blk.0.attn_q.weight", "blk.2.ffn_down.weight", "blk.0.ffn_up.weight"}) {
        const auto& t = f->tensor(name);
        const double target = 1.0 / std::sqrt(static_cast<double>(t.ne[0]));
        EXPECT_NEAR(rmsOf(t, static_cast<int64_t>(t.ne[1])), target, 0.04 * target) << name;
    }
    EXPECT_NEAR(rmsOf(f->tensor("token_embd.weight"), 1024), 1.0, 0.04);
    EXPECT_NEAR(rmsOf(f->tensor("output_norm.weight"), 1), 1.0, 0.01);
#endif
}

}  // namespace
}  // namespace zinc::model
