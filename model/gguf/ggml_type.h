#pragma once
// ggml tensor types as numbered in GGUF files. Numbers, block sizes and block byte sizes
// follow ggml's `enum ggml_type` and `type_traits` (ggml/include/ggml.h, ggml/src/ggml.c,
// MIT); GGUF stores the number in each tensor info. Types not computed here are still named
// so that an error can say "IQ4_XS is not supported" instead of "unknown type 23".
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace zinc::model {

enum class GgmlType : uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
    IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
    IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
    TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct GgmlTypeTraits {
    GgmlType type;
    std::string_view name;
    uint32_t blockElems;   // elements per block (1 for plain types)
    uint32_t blockBytes;   // bytes per block
    bool computable;       // dequantize + dot product implemented by zinc-rt
};

// Traits of a type number read from a file, or nullopt when the number names no ggml type.
std::optional<GgmlTypeTraits> ggmlTypeTraits(uint32_t typeNumber);
// Traits of a known type (always succeeds).
const GgmlTypeTraits& traitsOf(GgmlType type);
std::string_view ggmlTypeName(GgmlType type);
// Parses "Q4_K", "q8_0", "f16"...; nullopt when unknown.
std::optional<GgmlType> ggmlTypeFromName(std::string_view name);
// Bytes of one row of n elements (n must be a multiple of the block size).
inline uint64_t rowBytes(GgmlType type, uint64_t n) {
    const auto& t = traitsOf(type);
    return n / t.blockElems * t.blockBytes;
}

}  // namespace zinc::model
