// Tensor plans and quant-mix type choices against llama-quantize's rules
// (llama.cpp src/llama-quant.cpp): Q6_K for the output (or tied token_embd), use_more_bits
// layers for attn_v / ffn_down, Mixtral-style 8-expert bumps, and the fallbacks for rows that
// are not whole super-blocks.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "model/make_model/model_preset.h"
#include "model/make_model/quant_mix.h"
#include "model/make_model/tensor_plan.h"

namespace zinc::model {
namespace {

std::map<std::string, GgmlType> typesOf(const std::string& presetName, const std::string& mixName) {
    const auto preset = findModelPreset(presetName);
    const auto mix = findQuantMix(mixName);
    EXPECT_TRUE(preset && mix);
    std::map<std::string, GgmlType> out;
    for (const auto& t : planTensors(*preset)) out[t.name] = chooseTensorType(*mix, t, *preset);
    return out;
}

std::string blk(int layer, const char* name) { return "blk." + std::to_string(layer) + "." + name + ".weight"; }

TEST(MakeModelPlan, Qwen3_8BHasRealShapesAndNames) {
    const auto preset = findModelPreset("qwen3-8b");
    ASSERT_TRUE(preset);
    const auto plan = planTensors(*preset);
    EXPECT_EQ(plan.size(), 3u + 36 * 11);
    std::map<std::string, PlannedTensor> byName;
    for (const auto& t : plan) byName.emplace(t.name, t);
    auto shape = [&](const std::string& name) {
        const auto& t = byName.at(name);
        return std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.nDims);
    };
    EXPECT_EQ(shape("token_embd.weight"), (std::vector<uint64_t>{4096, 151936}));
    EXPECT_EQ(shape("output.weight"), (std::vector<uint64_t>{4096, 151936}));
    EXPECT_EQ(shape(blk(0, "attn_q")), (std::vector<uint64_t>{4096, 4096}));
    EXPECT_EQ(shape(blk(0, "attn_k")), (std::vector<uint64_t>{4096, 1024}));
    EXPECT_EQ(shape(blk(0, "attn_output")), (std::vector<uint64_t>{4096, 4096}));
    EXPECT_EQ(shape(blk(35, "ffn_down")), (std::vector<uint64_t>{12288, 4096}));
    EXPECT_EQ(shape(blk(35, "attn_q_norm")), (std::vector<uint64_t>{128}));
}

TEST(MakeModelPlan, TiedPresetHasNoOutputWeight) {
    const auto plan = planTensors(*findModelPreset("qwen3-0.6b"));
    for (const auto& t : plan) EXPECT_NE(t.name, "output.weight");
    EXPECT_EQ(typesOf("qwen3-0.6b", "q4_k_m").at("token_embd.weight"), GgmlType::Q6_K);
    EXPECT_EQ(typesOf("qwen3-8b", "q4_k_m").at("token_embd.weight"), GgmlType::Q4_K);
}

TEST(MakeModelPlan, MoePresetHasThreeDimensionalExperts) {
    const auto preset = findModelPreset("qwen3-30b-a3b");
    std::map<std::string, PlannedTensor> byName;
    for (const auto& t : planTensors(*preset)) byName.emplace(t.name, t);
    const auto& down = byName.at(blk(47, "ffn_down_exps"));
    EXPECT_EQ(down.nDims, 3u);
    EXPECT_EQ(down.ne[0], 768u);
    EXPECT_EQ(down.ne[1], 2048u);
    EXPECT_EQ(down.ne[2], 128u);
    EXPECT_EQ(byName.at(blk(0, "ffn_gate_inp")).ne[1], 128u);
    EXPECT_EQ(byName.count(blk(0, "ffn_gate")), 0u);
}

// use_more_bits for 36 layers: 0-3, 31-35, and 6, 9, ..., 30.
TEST(MakeModelQuantMix, Q4KMUsesQ6KOnUseMoreBitsLayers) {
    const auto types = typesOf("qwen3-8b", "q4_k_m");
    std::set<int> more = {0, 1, 2, 3, 31, 32, 33, 34, 35};
    for (int l = 6; l <= 30; l += 3) more.insert(l);
    for (int l = 0; l < 36; ++l) {
        const GgmlType expected = more.count(l) ? GgmlType::Q6_K : GgmlType::Q4_K;
        EXPECT_EQ(types.at(blk(l, "attn_v")), expected) << l;
        EXPECT_EQ(types.at(blk(l, "ffn_down")), expected) << l;
        EXPECT_EQ(types.at(blk(l, "attn_q")), GgmlType::Q4_K);
        EXPECT_EQ(types.at(blk(l, "attn_k")), GgmlType::Q4_K);
        EXPECT_EQ(types.at(blk(l, "ffn_gate")), GgmlType::Q4_K);
        EXPECT_EQ(types.at(blk(l, "attn_norm")), GgmlType::F32);
        EXPECT_EQ(types.at(blk(l, "attn_k_norm")), GgmlType::F32);
    }
    EXPECT_EQ(types.at("output.weight"), GgmlType::Q6_K);
    EXPECT_EQ(types.at("output_norm.weight"), GgmlType::F32);
}

TEST(MakeModelQuantMix, Q4KMOnTheMoePreset) {
    const auto types = typesOf("qwen3-30b-a3b", "q4_k_m");
    // 48 layers: 0-5, 42-47 and (l - 6) % 3 == 2.
    for (int l = 0; l < 48; ++l) {
        const bool more = l < 6 || l >= 42 || (l - 6) % 3 == 2;
        EXPECT_EQ(types.at(blk(l, "ffn_down_exps")), more ? GgmlType::Q6_K : GgmlType::Q4_K) << l;
        EXPECT_EQ(types.at(blk(l, "attn_v")), more ? GgmlType::Q6_K : GgmlType::Q4_K) << l;
        EXPECT_EQ(types.at(blk(l, "ffn_gate_exps")), GgmlType::Q4_K);
        EXPECT_EQ(types.at(blk(l, "ffn_gate_inp")), GgmlType::F32);
        EXPECT_EQ(types.at(blk(l, "attn_output")), GgmlType::Q4_K);
    }
}

// llama.cpp's 8-expert (Mixtral) special cases also hit qwen3moe-tiny, which has 8 experts.
TEST(MakeModelQuantMix, EightExpertModelsBumpAttention) {
    const auto types = typesOf("qwen3moe-tiny", "q4_k_m");
    for (int l = 0; l < 4; ++l) {
        EXPECT_EQ(types.at(blk(l, "attn_v")), GgmlType::Q8_0);
        EXPECT_EQ(types.at(blk(l, "attn_k")), GgmlType::Q8_0);
        EXPECT_EQ(types.at(blk(l, "attn_output")), GgmlType::Q5_K);
    }
}

TEST(MakeModelQuantMix, OtherMixes) {
    for (const auto& [name, type] : typesOf("qwen3-8b", "q8_0"))
        EXPECT_EQ(type, name.find("norm") != std::string::npos ? GgmlType::F32 : GgmlType::Q8_0) << name;
    const auto q40 = typesOf("qwen3-8b", "q4_0");
    EXPECT_EQ(q40.at("output.weight"), GgmlType::Q6_K);
    EXPECT_EQ(q40.at("token_embd.weight"), GgmlType::Q4_0);
    EXPECT_EQ(q40.at(blk(0, "attn_v")), GgmlType::Q4_0);
    const auto q5 = typesOf("qwen3-8b", "q5_k_m");
    EXPECT_EQ(q5.at(blk(0, "attn_v")), GgmlType::Q6_K);
    EXPECT_EQ(q5.at(blk(4, "attn_v")), GgmlType::Q5_K);
    EXPECT_EQ(q5.at(blk(4, "ffn_up")), GgmlType::Q5_K);
    for (const auto& [name, type] : typesOf("qwen3-30b-a3b", "f16")) {
        const bool f32 = name.find("norm") != std::string::npos || name.find("gate_inp") != std::string::npos;
        EXPECT_EQ(type, f32 ? GgmlType::F32 : GgmlType::F16) << name;
    }
    for (const auto& [name, type] : typesOf("llama-tiny", "f32")) EXPECT_EQ(type, GgmlType::F32) << name;
    EXPECT_EQ(findQuantMix("q4_k_m")->fileType, 15u);
    EXPECT_EQ(findQuantMix("q8_0")->fileType, 7u);
    EXPECT_FALSE(findQuantMix("q3_k_s").has_value());  // only the mixes GGUFs commonly ship
}

TEST(MakeModelQuantMix, RowsThatAreNotWholeSuperBlocksFallBack) {
    ModelPreset p = *findModelPreset("llama-tiny");
    auto weight = [](const char* name, uint64_t rowLength) {
        return PlannedTensor{name, TensorRole::Weight, 2, {rowLength, 64, 1, 1}, 3};
    };
    const auto q4km = *findQuantMix("q4_k_m");
    const auto q5km = *findQuantMix("q5_k_m");
    EXPECT_EQ(chooseTensorType(q4km, weight("blk.3.attn_q.weight", 64), p), GgmlType::Q5_0);
    EXPECT_EQ(chooseTensorType(q4km, weight("blk.3.attn_v.weight", 64), p), GgmlType::Q8_0);  // Q6_K -> Q8_0
    EXPECT_EQ(chooseTensorType(q5km, weight("blk.1.ffn_up.weight", 96), p), GgmlType::Q5_1);
    EXPECT_EQ(chooseTensorType(q4km, weight("output.weight", 64), p), GgmlType::Q8_0);
    EXPECT_EQ(chooseTensorType(q4km, weight("blk.1.ffn_up.weight", 48), p), GgmlType::F16);
    EXPECT_EQ(chooseTensorType(q4km, weight("blk.1.ffn_up.weight", 512), p), GgmlType::Q4_K);
}

}  // namespace
}  // namespace zinc::model

namespace zinc::model {
namespace {

// Q3_K_M, Q2_K and IQ4_XS as llama-quantize lays them out (no imatrix) on Llama-3.1-8B's shape
// (32 query heads on 8 kv heads: n_gqa 4) and Gemma 3's (tied embeddings, n_gqa 2).
TEST(MakeModelQuantMix, Q3KMBumpsAttentionAndFfnDown) {
    const auto types = typesOf("llama-3.1-8b", "q3_k_m");
    for (int l = 0; l < 32; ++l) {
        EXPECT_EQ(types.at(blk(l, "attn_v")), l < 2 ? GgmlType::Q5_K : GgmlType::Q4_K) << l;
        EXPECT_EQ(types.at(blk(l, "ffn_down")), l < 2 ? GgmlType::Q5_K : GgmlType::Q4_K) << l;  // first 16th
        EXPECT_EQ(types.at(blk(l, "attn_output")), GgmlType::Q4_K);
        EXPECT_EQ(types.at(blk(l, "attn_q")), GgmlType::Q3_K);
        EXPECT_EQ(types.at(blk(l, "ffn_up")), GgmlType::Q3_K);
    }
    EXPECT_EQ(types.at("output.weight"), GgmlType::Q6_K);
    EXPECT_EQ(types.at("token_embd.weight"), GgmlType::Q3_K);
    EXPECT_EQ(types.at("rope_freqs.weight"), GgmlType::F32);
    EXPECT_EQ(findQuantMix("q3_k_m")->fileType, 12u);
}

TEST(MakeModelQuantMix, Q2KKeepsAttentionVAtQ4KWithFourQueryHeadsPerKvHead) {
    const auto llama = typesOf("llama-3.1-8b", "q2_k");
    const auto gemma = typesOf("gemma-3-12b", "q2_k");
    for (int l = 0; l < 32; ++l) {
        EXPECT_EQ(llama.at(blk(l, "attn_v")), GgmlType::Q4_K) << l;
        EXPECT_EQ(gemma.at(blk(l, "attn_v")), GgmlType::Q3_K) << l;  // 16 / 8 heads
        EXPECT_EQ(llama.at(blk(l, "ffn_down")), GgmlType::Q3_K);
        EXPECT_EQ(llama.at(blk(l, "attn_output")), GgmlType::Q3_K);
        EXPECT_EQ(llama.at(blk(l, "ffn_gate")), GgmlType::Q2_K);
        EXPECT_EQ(llama.at(blk(l, "attn_k")), GgmlType::Q2_K);
    }
    EXPECT_EQ(llama.at("output.weight"), GgmlType::Q6_K);
    EXPECT_EQ(gemma.at("token_embd.weight"), GgmlType::Q6_K);  // tied: the output's type
    EXPECT_EQ(findQuantMix("q2_k")->fileType, 10u);
}

TEST(MakeModelQuantMix, IQ4XSBumpsTheFirstEighthOfFfnDown) {
    const auto llama = typesOf("llama-3.1-8b", "iq4_xs");
    const auto gemma = typesOf("gemma-3-12b", "iq4_xs");
    for (int l = 0; l < 32; ++l) {
        EXPECT_EQ(llama.at(blk(l, "ffn_down")), l < 4 ? GgmlType::Q5_K : GgmlType::IQ4_XS) << l;
        EXPECT_EQ(llama.at(blk(l, "attn_v")), GgmlType::Q5_K) << l;
        EXPECT_EQ(gemma.at(blk(l, "attn_v")), GgmlType::IQ4_XS) << l;
        EXPECT_EQ(llama.at(blk(l, "attn_output")), GgmlType::IQ4_XS);
    }
    EXPECT_EQ(gemma.at(blk(0, "post_ffw_norm")), GgmlType::F32);
    EXPECT_EQ(findQuantMix("iq4_xs")->fileType, 30u);
    // Rows that are not whole super-blocks: IQ4_XS -> IQ4_NL, Q2_K / Q3_K -> Q4_0.
    const ModelPreset p = *findModelPreset("llama-tiny");
    const PlannedTensor narrow{"blk.3.attn_q.weight", TensorRole::Weight, 2, {96, 64, 1, 1}, 3};
    EXPECT_EQ(chooseTensorType(*findQuantMix("iq4_xs"), narrow, p), GgmlType::IQ4_NL);
    EXPECT_EQ(chooseTensorType(*findQuantMix("q2_k"), narrow, p), GgmlType::Q4_0);
    EXPECT_EQ(chooseTensorType(*findQuantMix("q3_k_m"), narrow, p), GgmlType::Q4_0);
}

TEST(MakeModelPlan, GemmaAndLlama31PresetsHaveTheirTensors) {
    std::map<std::string, PlannedTensor> gemma, llama;
    for (const auto& t : planTensors(*findModelPreset("gemma-3-12b"))) gemma.emplace(t.name, t);
    for (const auto& t : planTensors(*findModelPreset("llama-3.1-8b"))) llama.emplace(t.name, t);
    EXPECT_EQ(gemma.count("output.weight"), 0u);
    EXPECT_EQ(gemma.at(blk(47, "post_attention_norm")).ne[0], 3840u);
    EXPECT_EQ(gemma.at(blk(0, "attn_q")).ne[1], 16u * 256u);  // head_dim 256, not d / heads
    EXPECT_EQ(gemma.at(blk(0, "attn_k_norm")).ne[0], 256u);
    EXPECT_EQ(llama.at("rope_freqs.weight").ne[0], 64u);
    EXPECT_EQ(llama.at(blk(31, "ffn_down")).ne[0], 14336u);
    EXPECT_EQ(llama.at("token_embd.weight").ne[1], 128256u);
}

}  // namespace
}  // namespace zinc::model
