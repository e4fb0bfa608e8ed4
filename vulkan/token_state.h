#pragma once
// The token-state block the kernels read (vulkan/shaders/common.glsl kState*): written by the
// host before a submission, advanced by the argmax kernel in greedy generation.
//
// A step of one sequence (evaluate, generation) sets rowsAt = 0: token t sits at position + t
// in sequence slot 0. A step over rows of several sequences (Tier::evaluateRows, continuous
// batching) sets rowsAt to the int index of three arrays of `rowsStride` (maxBatch) ints each:
// every row's position, the first KV cache row of its sequence slot (slot x KvLayout::rows),
// and then the rows whose logits are wanted, in order (the gather before the output head).
#include <cstdint>

namespace zinc::vk {

struct TokenStateHeader {
    int32_t position = 0;  // of the batch's first token
    int32_t nTokens = 1;
    int32_t kvLength = 0;  // position + nTokens
    int32_t step = 0;      // greedy tokens produced so far (index into the id ring)
    int32_t rowsAt = 0;    // 0, or where the per-row arrays start (kStateRowsAt)
    int32_t rowsStride = 0;
    int32_t reserved[2] = {};
};
static_assert(sizeof(TokenStateHeader) == 8 * sizeof(int32_t), "tokens start at int 8 (kStateTokens)");

// The ids, then the three per-row arrays.
inline constexpr int32_t kTokenStateRowArrays = 3;
inline constexpr int32_t tokenStateRowsAt(int32_t maxBatch) { return 8 + maxBatch; }
inline constexpr size_t tokenStateBytes(int32_t maxBatch) {
    return sizeof(TokenStateHeader) + sizeof(int32_t) * static_cast<size_t>(maxBatch) * (1 + kTokenStateRowArrays);
}

}  // namespace zinc::vk
