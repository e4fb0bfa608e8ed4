#version 450
// Activation rows -> the formats the cpu tier multiplies quantized weights with
// (model/quant/quantize_activations.cpp), with the same rounding: Q8_0/Q8_1 as ggml's x86
// AVX branch (id = 127/amax, round half to even, d stored as fp16), Q8_K as ggml's
// quantize_row_q8_K (iscale = -127/max of largest magnitude, d = 1/iscale).
// GPU layout of one quantized row of k values: k/4 words of packed int8 quants, then k/32
// block scales d (as float; fp16-rounded for Q8_0/Q8_1), then k/32 block sums s as float
// (Q8_1: fp16(d * sum), Q8_K: d * sum of the 32 quants). F16/BF16/F32 modes write k floats
// rounded to that type. Optionally computes first (`prologue`) silu(x) * x2 (fused SwiGLU),
// x * sigmoid(x2) (the qwen35 output gates, gate.comp's mode 1) or the DeltaNet output norm
// (gated_norm.comp: per head, x / rms * normW * silu(x2)), or RMSNorm of the whole row times
// normW; the norms and the gate also write their floats to normOut (the fused norm: every
// workgroup sums the row's squares itself, so one dispatch does both).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "reduce.glsl"

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
} pc;

shared float vals[256];
shared float absv[256];
shared uint idx[256];
shared int qv[256];
shared float squares[256];

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
        float sum = 0.0;
        for (uint j = tid; j < pc.k; j += 256u) {
            const float xj = pc.x.v[row * pc.inStride + j];
            sum += xj * xj;
        }
        sum = workgroupSum(sum);
        const float scale = 1.0 / sqrt(sum / float(pc.k) + pc.eps);
        if (inside) {
            v = v * scale * pc.normW.v[i];
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
        return;
    }
    // Largest magnitude per group (32 for Q8_0/Q8_1, 256 for Q8_K), the first one on ties.
    const uint group = pc.mode == 2u ? 256u : 32u;
    vals[tid] = v;
    // Subgroups of 32 (NVIDIA; RADV in wave32): a subgroup is one 32-value block, reduced in
    // registers, and Q8_K's eight blocks meet through shared memory; other sizes (lavapipe's 8,
    // wave64) take the tree. Both give the maximum and the lowest index holding it: the same
    // bits. The tree's eight barriers and the block sum's serial loop were most of this
    // kernel's latency, which a decode step pays four times a layer.
    const bool bySubgroup = gl_SubgroupSize == 32u;
    float amax;
    uint first;
    if (bySubgroup) {
        const float a = abs(v);
        amax = subgroupMax(a);
        first = subgroupMin(a == amax ? tid : 0xffffffffu);
        if (pc.mode == 2u) {
            if (subgroupElect()) {
                absv[gl_SubgroupID] = amax;
                idx[gl_SubgroupID] = first;
            }
            barrier();  // also publishes vals[]
            amax = absv[0];
            first = idx[0];
            for (uint c = 1u; c < 8u; ++c)
                if (absv[c] > amax) {  // a later block wins only with a larger magnitude
                    amax = absv[c];
                    first = idx[c];
                }
        }
    } else {
        absv[tid] = abs(v);
        idx[tid] = tid;
        barrier();
        for (uint s = group / 2u; s > 0u; s >>= 1u) {
            if ((tid % group) < s) {
                const float a = absv[tid], b = absv[tid + s];
                if (b > a || (b == a && idx[tid + s] < idx[tid])) {
                    absv[tid] = b;
                    idx[tid] = idx[tid + s];
                }
            }
            barrier();
        }
        const uint lead = tid - tid % group;
        amax = absv[lead];
        first = idx[lead];
    }
    int q = 0;
    float d = 0.0;
    if (pc.mode == 2u) {
        if (amax != 0.0) {
            const float iscale = -127.0 / vals[first];
            q = min(127, int(roundEven(iscale * v)));
            d = 1.0 / iscale;
        }
    } else {
        const float id = amax != 0.0 ? 127.0 / amax : 0.0;
        q = clamp(int(roundEven(v * id)), -128, 127);
        d = amax / 127.0;
    }
    const int blockSum = bySubgroup ? subgroupAdd(q) : 0;  // exact: integers
    qv[tid] = q;
    barrier();
    if (!inside) return;
    if (tid % 4u == 0u) {
        const uint word = (uint(qv[tid]) & 0xffu) | ((uint(qv[tid + 1u]) & 0xffu) << 8) |
                          ((uint(qv[tid + 2u]) & 0xffu) << 16) | ((uint(qv[tid + 3u]) & 0xffu) << 24);
        pc.out_.v[outBase + i / 4u] = word;
    }
    if (tid % 32u == 0u) {
        int sum = blockSum;
        if (!bySubgroup)
            for (uint j = 0u; j < 32u; ++j) sum += qv[tid + j];
        const uint block = i / 32u;
        const uint nBlocks = pc.k / 32u;
        float dStored = d, s = 0.0;
        if (pc.mode == 0u) dStored = roundHalf(d);
        if (pc.mode == 1u) {
            dStored = roundHalf(d);
            s = roundHalf(d * float(sum));
        }
        if (pc.mode == 2u) s = d * float(sum);
        pc.out_.v[outBase + pc.k / 4u + block] = floatBitsToUint(dStored);
        pc.out_.v[outBase + pc.k / 4u + nBlocks + block] = floatBitsToUint(s);
    }
}
