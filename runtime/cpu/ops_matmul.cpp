// Matrix times activations. In ggml precision the input rows are first put into the
// activation format the weight type multiplies against (8-bit blocks for quantized weights,
// as llama.cpp does); in f32 precision each weight row is dequantized and dotted in fp32.
// Output rows are split across the pool in chunks of a multiple of 4 rows, so the kernels
// can share activation loads across rows.
#include <algorithm>
#include <vector>

#include "model/quant/dequantize.h"
#include "runtime/cpu/op_context.h"
#include "runtime/cpu/quant_dot.h"

namespace zinc::cpu {
namespace {

int64_t rowGrain(const ThreadPool& pool, int64_t rows) {
    // Enough chunks to balance the pool, few enough to keep per-chunk overhead negligible.
    const int64_t grain = std::max<int64_t>(16, rows / (pool.threads() * 8));
    return (grain + 3) / 4 * 4;
}

void projectQuantized(const OpContext& ctx, const model::WeightRef& w, int64_t slice, const float* x, size_t xStride,
                      int32_t tokens, float* y, size_t yStride) {
    const size_t actBytes = activationRowBytes(w.type, w.cols);
    AlignedBytes& acts = ctx.actScratch;
    if (acts.size() < actBytes * static_cast<size_t>(tokens)) acts.resize(actBytes * static_cast<size_t>(tokens));
    uint8_t* actData = acts.data();
    ctx.pool.parallelFor(tokens, 4, [&](int64_t begin, int64_t end, int) {
        for (int64_t t = begin; t < end; ++t)
            quantizeActivationRow(w.type, x + static_cast<size_t>(t) * xStride, actData + static_cast<size_t>(t) * actBytes,
                                  w.cols);
    });
    const uint8_t* base = w.row(0, slice);
    ctx.pool.parallelFor(w.rows, rowGrain(ctx.pool, w.rows), [&](int64_t begin, int64_t end, int) {
        const uint8_t* wRows = base + static_cast<size_t>(begin) * w.rowBytes;
        if (tokens == 1)
            matVec(w.type, w.cols, wRows, w.rowBytes, end - begin, actData, y + begin);
        else
            matMul(w.type, w.cols, wRows, w.rowBytes, end - begin, actData, tokens, y + begin, yStride);
    });
}

void projectF32(const OpContext& ctx, const model::WeightRef& w, int64_t slice, const float* x, size_t xStride,
                int32_t tokens, float* y, size_t yStride) {
    ctx.pool.parallelFor(w.rows, rowGrain(ctx.pool, w.rows), [&](int64_t begin, int64_t end, int) {
        thread_local std::vector<float> row;
        row.resize(static_cast<size_t>(w.cols));
        for (int64_t r = begin; r < end; ++r) {
            model::dequantizeRow(w.type, w.row(r, slice), row.data(), w.cols);
            for (int32_t t = 0; t < tokens; ++t) {
                const float* xt = x + static_cast<size_t>(t) * xStride;
                double sum = 0.0;
                for (int64_t i = 0; i < w.cols; ++i) sum += static_cast<double>(row[static_cast<size_t>(i)]) * xt[i];
                y[static_cast<size_t>(t) * yStride + static_cast<size_t>(r)] = static_cast<float>(sum);
            }
        }
    });
}

}  // namespace

void project(const OpContext& ctx, const model::WeightRef& w, int64_t slice, const float* x, size_t xStride,
             int32_t tokens, float* y, size_t yStride) {
    if (ctx.precision == runtime::Precision::F32)
        projectF32(ctx, w, slice, x, xStride, tokens, y, yStride);
    else
        projectQuantized(ctx, w, slice, x, xStride, tokens, y, yStride);
}

// ggml adds the bias as its own op after the matmul, in fp32.
static void addBias(const OpContext& ctx, const model::WeightRef& bias, graph::BufferId out) {
    const auto* b = reinterpret_cast<const float*>(bias.data);
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        float* y = ctx.f32(out, t);
        for (int64_t i = 0; i < bias.cols; ++i) y[i] += b[i];
    }
}

void runMatMul(const OpContext& ctx, const graph::Op& op) {
    project(ctx, *op.weight, 0, ctx.f32(op.in, ctx.firstRow), static_cast<size_t>(ctx.graph.buffer(op.in).width),
            ctx.rows, ctx.f32(op.out, ctx.firstRow), static_cast<size_t>(ctx.graph.buffer(op.out).width));
    if (op.bias) addBias(ctx, *op.bias, op.out);
}

}  // namespace zinc::cpu
