#pragma once
// Quantization mixes: which ggml type each tensor gets. The quantized mixes follow
// llama-quantize's rules (llama.cpp src/llama-quant.cpp, llama_tensor_get_type_impl and
// tensor_type_fallback, MIT) so a generated file has the type layout a real conversion has;
// f16/f32 follow convert_hf_to_gguf.py (1-D tensors, norms and the MoE router stay F32).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/gguf/ggml_type.h"
#include "model/make_model/model_preset.h"
#include "model/make_model/tensor_plan.h"

namespace zinc::model {

struct QuantMix {
    std::string name;         // "q4_k_m"
    std::string description;
    uint32_t fileType;        // general.file_type (llama_ftype)
    GgmlType defaultType;     // type of most 2-D weights
    bool quantized;           // llama-quantize rules apply
};

const std::vector<QuantMix>& quantMixes();
std::optional<QuantMix> findQuantMix(std::string_view name);

// The type llama-quantize (or the converter, for f16/f32) would give this tensor.
GgmlType chooseTensorType(const QuantMix& mix, const PlannedTensor& tensor, const ModelPreset& preset);

}  // namespace zinc::model
