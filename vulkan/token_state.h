#pragma once
// The token-state block the kernels read (vulkan/shaders/common.glsl kState*): written by the
// host before a submission, advanced by the argmax kernel in greedy generation.
#include <cstdint>

namespace zinc::vk {

struct TokenStateHeader {
    int32_t position = 0;  // of the batch's first token
    int32_t nTokens = 1;
    int32_t kvLength = 0;  // position + nTokens
    int32_t step = 0;      // greedy tokens produced so far (index into the id ring)
    int32_t reserved[4] = {};
};
static_assert(sizeof(TokenStateHeader) == 8 * sizeof(int32_t), "tokens start at int 8 (kStateTokens)");

inline constexpr size_t tokenStateBytes(int32_t maxBatch) {
    return sizeof(TokenStateHeader) + sizeof(int32_t) * static_cast<size_t>(maxBatch);
}

}  // namespace zinc::vk
