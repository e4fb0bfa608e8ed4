// Matrix times activations. The input rows are first put into the activation format the
// weight type multiplies against (8-bit blocks for quantized weights, as llama.cpp does),
// then the output rows are split across the pool; each chunk is a multiple of 4 rows so the
// kernels can share activation loads across rows.
#include <algorithm>
#include <cstring>

#include "runtime/cpu/op_context.h"
#include "runtime/cpu/quant_dot.h"

namespace zinc::cpu {

void quantizeRows(ThreadPool& pool, const model::WeightRef& w, const float* x, size_t xStride, int32_t tokens,
                  AlignedBytes& out) {
    const size_t rowBytes = activationRowBytes(w.type, w.cols);
    if (out.size() < rowBytes * static_cast<size_t>(tokens)) out.resize(rowBytes * static_cast<size_t>(tokens));
    uint8_t* dst = out.data();
    pool.parallelFor(tokens, 4, [&](int64_t begin, int64_t end, int) {
        for (int64_t t = begin; t < end; ++t)
            quantizeActivationRow(w.type, x + static_cast<size_t>(t) * xStride, dst + static_cast<size_t>(t) * rowBytes,
                                  w.cols);
    });
}

void matMulRows(ThreadPool& pool, const model::WeightRef& w, int64_t sliceIndex, const uint8_t* acts, int32_t tokens,
                float* y, size_t yStride) {
    const int64_t rows = w.rows;
    // Enough chunks to balance the pool, few enough to keep per-chunk overhead negligible.
    int64_t grain = std::max<int64_t>(16, rows / (pool.threads() * 8));
    grain = (grain + 3) / 4 * 4;
    const uint8_t* base = w.row(0, sliceIndex);
    pool.parallelFor(rows, grain, [&](int64_t begin, int64_t end, int) {
        const uint8_t* wRows = base + static_cast<size_t>(begin) * w.rowBytes;
        if (tokens == 1)
            matVec(w.type, w.cols, wRows, w.rowBytes, end - begin, acts, y + begin);
        else
            matMul(w.type, w.cols, wRows, w.rowBytes, end - begin, acts, tokens, y + begin, yStride);
    });
}

void runMatMul(const OpContext& ctx, const graph::Op& op) {
    const auto& w = *op.weight;
    const size_t inWidth = static_cast<size_t>(ctx.graph.buffer(op.in).width);
    const size_t outWidth = static_cast<size_t>(ctx.graph.buffer(op.out).width);
    quantizeRows(ctx.pool, w, ctx.f32(op.in, ctx.firstRow), inWidth, ctx.rows, ctx.actScratch);
    matMulRows(ctx.pool, w, 0, ctx.actScratch.data(), ctx.rows, ctx.f32(op.out, ctx.firstRow), outWidth);
}

}  // namespace zinc::cpu
