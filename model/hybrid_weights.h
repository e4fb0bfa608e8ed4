#pragma once
// Tensor binding for the qwen35 / qwen35moe layer stack: gated DeltaNet layers, gated full
// attention every full_attention_interval-th layer, post_attention_norm before the FFN and the
// sigmoid-gated shared expert. MTP (nextn) blocks past the stack are left unbound: they stay
// in the mapped file and are never read.
#include "model/model_weights.h"

namespace zinc::model {

class GgufFile;
struct ModelConfig;

LayerWeights bindHybridLayer(const GgufFile& file, const ModelConfig& c, int il);

}  // namespace zinc::model
