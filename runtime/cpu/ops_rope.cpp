// Rotary position embedding. Norm style rotates adjacent pairs (2i, 2i+1) (llama); Neox
// style rotates (i, i + d/2) (qwen3). The angle table is filled once per evaluate call (see
// fillRopeTables), the way ggml computes it: theta_i = pos * base^(-2i/d), by repeated
// multiplication in float.
#include "runtime/cpu/op_context.h"

namespace zinc::cpu {

void runRope(const OpContext& ctx, const graph::Op& op) {
    const auto& c = *ctx.graph.config;
    const int32_t half = c.ropeDim / 2;
    for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t) {
        const bool swa = op.window > 0 && ctx.ropeCosSwa;
        const float* cs = (swa ? ctx.ropeCosSwa : ctx.ropeCos) + static_cast<size_t>(t) * static_cast<size_t>(half);
        const float* sn = (swa ? ctx.ropeSinSwa : ctx.ropeSin) + static_cast<size_t>(t) * static_cast<size_t>(half);
        float* row = ctx.f32(op.in, t);
        for (int32_t h = 0; h < op.heads; ++h) {
            float* x = row + h * c.headDim;
            for (int32_t i = 0; i < half; ++i) {
                const int32_t a = c.ropeStyle == model::RopeStyle::Norm ? 2 * i : i;
                const int32_t b = c.ropeStyle == model::RopeStyle::Norm ? 2 * i + 1 : i + c.ropeDim / 2;
                const float x0 = x[a], x1 = x[b];
                x[a] = x0 * cs[i] - x1 * sn[i];
                x[b] = x0 * sn[i] + x1 * cs[i];
            }
        }
    }
}

}  // namespace zinc::cpu
