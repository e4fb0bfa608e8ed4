#pragma once
// Prefill matmuls on matrix cores in two passes (issue 19): dequant_f16.comp decodes a
// quantized weight matrix to f16 rows in a scratch buffer, then matmul_f16.comp multiplies
// them by the 8-bit activations in software-pipelined cooperative-matrix tiles. A matrix whose
// f16 rows (gate and up for PAIR, every expert for EXPERT) exceed the scratch is done in
// chunks of rows, each a dequant and a GEMM. MatVecOp::multiplyTiled calls it where
// DeviceCaps::coopmatDequant and the tier has the scratch (TierMemory).
#include <vulkan/vulkan.h>

#include <cstdint>

#include "graph/graph.h"
#include "model/gguf/ggml_type.h"
#include "vulkan/coopmat_tile.h"
#include "vulkan/recorder.h"
#include "vulkan/vk_pipeline.h"

namespace zinc::vk {

// The matrix-core matmuls' tile for m rows (per weight set) and `columns` workgroup columns
// (token tiles, or expert tiles): the forced one (DeviceCaps::coopmatTile), else the largest
// that still gives enough workgroups, within shared memory. `twoPass`: matmul_f16.comp's shared
// memory, else matmul_coopmat.comp's.
CoopmatTile coopmatTileFor(const DeviceCaps& caps, uint32_t m, uint32_t tokens, bool pair, bool expert, bool twoPass);

// Shared memory of matmul_f16.comp: two stages of 80-byte rows (32 halves of k, 16 bytes of
// padding) for the weights of every set and the tokens, and the token tables.
constexpr uint32_t matmulF16SharedBytes(uint32_t rowsPerSet, uint32_t sets, uint32_t tokens) {
    return 2u * (sets * rowsPerSet + tokens) * 80u + 8u * tokens;
}

class F16MatMul {
public:
    explicit F16MatMul(PipelineFactory& pipelines);

    struct Call {
        model::GgmlType type = model::GgmlType::Q4_K;
        uint32_t rows = 0, cols = 0, rowBytes = 0;  // of one matrix (one expert's)
        VkDeviceAddress weights = 0, upWeights = 0;  // upWeights != 0: PAIR, out = silu(w · x) * (up · x)
        VkDeviceAddress act = 0;  // quantize.comp's 8-bit blocks
        uint32_t actStride = 0;   // words between activation rows
        VkDeviceAddress out = 0;
        uint32_t outStride = 0;   // floats between output rows
        uint32_t tokens = 0;      // EXPERT: (token, slot) pairs
        bool accumulate = false;
        // EXPERT (experts > 0): moe_group.comp's tiles at `group`, the pair order at int orderAt.
        uint32_t experts = 0, maxTiles = 0, actDiv = 1, orderAt = 0;
        VkDeviceAddress group = 0;
        VkDeviceAddress scratch = 0;
        uint64_t scratchBytes = 0;
    };
    // Records the dequant and GEMM dispatches; false (nothing recorded) when not even
    // kChunkAlign rows of the matrix fit the scratch.
    bool record(Recorder& rec, const Call& call);

    // One dequant dispatch: rows [row0, row0 + rows) of every set (and every expert with a
    // tile) to f16 at `scratch`, laid out [set][expert][rows][cols]. Also for tests.
    void recordDequant(Recorder& rec, const Call& call, uint32_t row0, uint32_t rows);

    // Rows per chunk of a matrix whose f16 rows (of all its sets and experts) take `rowBytes`
    // each: all of them if they fit `budget`, else the most multiples of kChunkAlign that do
    // (0 if none).
    static uint32_t chunkRows(uint64_t budget, uint32_t rows, uint64_t rowBytes);
    // The scratch a prefill of the graph needs: the largest matrix any tiled matmul multiplies,
    // its f16 rows capped at kScratchCap (such matrices run in chunks).
    static uint64_t scratchBytesFor(const graph::Graph& graph);
    // MatVecOp takes this path from this many tokens (EXPERT: pairs per expert, on average) on,
    // the integer matmul below (EXPERT: the one-pass matrix-core matmul, from
    // MatVecOp::kOnePassMinPairsPerExpert): a matrix is dequantized whole for whatever number of
    // tokens. Experts take two passes from 128 pairs an expert: since the one-pass kernel reads
    // Q4_K 16 bytes a load it wins below that (H200, run 75, prefill tok/s one pass / two:
    // Qwen3-30B-A3B 4,978 / 4,206 at 32 pairs, 6,152 / 5,716 at 64, 6,668 / 6,749 at 128; the
    // Qwen3.6-35B-A3B shape 3,515 / 3,094 at 32, 3,689 / 3,470 at 64).
    static constexpr uint32_t kMinTokens = 32, kMinPairsPerExpert = 128;
    static constexpr uint32_t kChunkAlign = 128;              // the largest tile's rows
    static constexpr uint64_t kScratchCap = uint64_t{512} << 20;

private:
    PipelineFactory& pipelines_;
    VkPipeline dequant_ = VK_NULL_HANDLE, expertDequant_ = VK_NULL_HANDLE;
    Shader gemm_;
};

}  // namespace zinc::vk
