#pragma once
// A double-precision forward pass of the dense architectures (llama without rope_freqs, qwen2,
// qwen3, gemma3), written from the model definitions and nothing of the tiers: weights
// dequantized once (exactly, as ggml does), every activation, the KV and the softmax kept in
// double. It is what ../shared/reference/README.md calibrates its tolerances against ("an
// independent float64 forward pass that keeps activations in full precision"), so a golden
// the README has not calibrated can be checked here: how far the reference itself sits from
// exact arithmetic, and how far each tier does.
#include <cstdint>
#include <vector>

namespace zinc::model { class Model; }

namespace zinc::test {

// Exact: everything in double. F16Kv: keys and values rounded to F16 as llama.cpp's default
// cache stores them. LikeReference: also each matmul's input rounded to the activation format
// the reference pairs with the weight's type (../shared/reference/README.md), the product
// itself still exact: where the reference's distance from Exact comes from.
enum class Fp64Rounding { Exact, F16Kv, LikeReference };

// Logits (nVocab doubles) after each token of `prompt`, fed one per position from 0.
// Throws std::runtime_error naming the model and feature for what it does not implement
// (MoE, DeltaNet, rope_freqs, yarn).
std::vector<std::vector<double>> fp64Logits(const model::Model& model, const std::vector<int32_t>& prompt,
                                            Fp64Rounding rounding = Fp64Rounding::Exact);

}  // namespace zinc::test
