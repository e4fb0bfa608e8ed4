#version 450
// Activation rows -> the formats the cpu tier multiplies quantized weights with
// (quant_block.glsl: the rounding, the layout). F16/BF16/F32 modes write k floats
// rounded to that type. Optionally computes first (`prologue`) silu(x) * x2 (fused SwiGLU),
// x * sigmoid(x2) (the qwen35 output gates, gate.comp's mode 1) or the DeltaNet output norm
// (gated_norm.comp: per head, x / rms * normW * silu(x2)), or RMSNorm of the whole row times
// normW; the norms and the gate also write their floats to normOut (the fused norm: every
// workgroup sums the row's squares itself, so one dispatch does both).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "reduce.glsl"
#include "quant_block.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf x;
    FloatBuf x2;      // SwiGLU up values when swiglu != 0
    UintBuf out_;
    uint k;
    uint inStride;    // floats between rows
    uint outStride;   // words between rows
    uint mode;        // 0 Q8_0, 1 Q8_1, 2 Q8_K, 3 F16, 4 BF16, 5 F32
    uint prologue;    // 0 none, 1 SwiGLU, 2 sigmoid gate, 3 gated norm
    FloatBuf normW;
    FloatBuf normOut;
    float eps;
    uint norm;
    uint x2Stride;    // prologues 2, 3: floats between rows of x2
    uint aux;         // prologue 2: gate floats per row (1: one per row); 3: the head size
    uint pad;
    UintBuf signal;   // ZINC_CHAIN: the site (vulkan/plan_context.h kChainSiteBytes)
} pc;

shared float squares[256];
const uint kNormAhead = 16u;  // a thread's row loads in flight in the fused RMSNorm (4,096 values: all)

// ZINC_CHAIN (quantize_signal; a matvec chained after this dispatch): each workgroup, its writes
// done, counts itself on every line of the site (chain.glsl).
#ifdef ZINC_CHAIN
#include "chain.glsl"
void signalDone() { chainSignal(pc.signal, kChainLines); }
#else
void signalDone() {}
#endif

// Σ v² over this thread's head of n values (n divides 256), summed as gated_norm.comp's
// workgroupSum does when a subgroup lies inside one head: the same bits.
float headSquares(float sq, uint n) {
    const uint tid = gl_LocalInvocationID.x, head = tid / n;
    float total = 0.0;
    if (gl_SubgroupSize <= n) {
        const float s = subgroupAdd(sq);
        if (subgroupElect()) reduceScratch_[gl_SubgroupID] = s;
        barrier();
        const uint per = n / gl_SubgroupSize;
        for (uint g = 0u; g < per; ++g) total += reduceScratch_[head * per + g];
    } else {
        squares[tid] = sq;
        barrier();
        for (uint j = 0u; j < n; ++j) total += squares[head * n + j];
    }
    barrier();
    return total;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint row = gl_WorkGroupID.y;
    const uint i = gl_WorkGroupID.x * 256u + tid;
    const bool inside = i < pc.k;
    float v = 0.0;
    if (inside) {
        v = pc.x.v[row * pc.inStride + i];
        if (pc.prologue == 1u) {
            const float u = pc.x2.v[row * pc.inStride + i];
            v = swiglu(v, u);
        } else if (pc.prologue == 2u) {
            const float g = pc.x2.v[row * pc.x2Stride + (pc.aux == 1u ? 0u : i)];
            v = v / (1.0 + exp(-g));
            pc.normOut.v[row * pc.inStride + i] = v;
        }
    }
    if (pc.prologue == 3u) {
        const uint n = pc.aux;
        const float scale = 1.0 / sqrt(headSquares(inside ? v * v : 0.0, n) / float(n) + pc.eps);
        if (inside) {
            const float z = pc.x2.v[row * pc.x2Stride + i];
            v = v * scale * pc.normW.v[i % n] * (z / (1.0 + exp(-z)));
            pc.normOut.v[row * pc.inStride + i] = v;
        }
    }
    if (pc.norm != 0u) {
        // The row's squares, every thread's loads (kNormAhead at a time) and its norm weight issued
        // before the first is used: one memory round trip before the sum, not one a load. The
        // same sum in the same order.
        const float w = inside ? pc.normW.v[i] : 0.0;
        float sum = 0.0;
        for (uint j0 = tid; j0 < pc.k; j0 += 256u * kNormAhead) {
            float xs[kNormAhead];
            [[unroll]] for (uint u = 0u; u < kNormAhead; ++u) {
                const uint j = j0 + 256u * u;
                xs[u] = j < pc.k ? pc.x.v[row * pc.inStride + j] : 0.0;
            }
            [[unroll]] for (uint u = 0u; u < kNormAhead; ++u)
                if (j0 + 256u * u < pc.k) sum += xs[u] * xs[u];
        }
        sum = workgroupSum(sum);
        const float scale = 1.0 / sqrt(sum / float(pc.k) + pc.eps);
        if (inside) {
            v = v * scale * w;
            pc.normOut.v[row * pc.inStride + i] = v;
        }
    }
    const uint outBase = row * pc.outStride;
    if (pc.mode >= 3u) {
        float r = v;
        if (pc.mode == 3u) r = roundHalf(v);
        if (pc.mode == 4u) {
            // round to nearest even on the upper 16 bits (ggml_compute_fp32_to_bf16)
            uint b = floatBitsToUint(v);
            if ((b & 0x7fffffffu) > 0x7f800000u)
                b = (b >> 16) | 64u;
            else
                b = (b + (0x7fffu + ((b >> 16) & 1u))) >> 16;
            r = uintBitsToFloat(b << 16);
        }
        if (inside) pc.out_.v[outBase + i] = floatBitsToUint(r);
        signalDone();
        return;
    }
    quantizeBlock(pc.out_, outBase, pc.k, tid, i, inside, v, pc.mode);
    signalDone();
}
