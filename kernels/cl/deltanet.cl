// The ops of the Qwen3.5 / Qwen3.6 hybrids (graph/hybrid_blocks.cpp has the math), as the cpu
// tier computes them (runtime/cpu/ops_deltanet.cpp, the oracle): the causal conv1d over its
// rolling window (ssm_conv), the gated delta-rule step (delta_net), the gated per-head RMSNorm
// (gated_norm), the query / output-gate split (split_gate) and the sigmoid gates (sigmoid_gate),
// and the copy of the recurrent state for snapshots (copy_words).
//
// The recurrent state (conv window, per-head state matrices) is a persistent buffer updated in
// place; a batch goes through it token by token, so batched prefill equals decoding one token
// at a time. A sequence starts from a zero state: ssm_conv and delta_net clear the part they own
// when the batch starts at position 0 (state[0] of the token-state block), so no clear is
// submitted between sequences and nothing is read back per token.
//
// A step over rows of several sequences (continuous batching) passes `rows` ({position, first KV
// row of its sequence slot} per row, the token-state block's rows array; 0 otherwise): each slot
// has a copy of the state, slotFloats floats after the slot before's, and row t steps the copy
// of slot rows[2t + 1] / kvRows, cleared first where the row is at position 0. A slot's rows are
// in position order, so walking the rows in order walks each slot's sequence in order. Where every
// row is in a slot of its own (decode rows: rowOfGroup), no row waits on another: workgroup y
// takes row y alone, and the rows run side by side.
//
// Uses ZK_SUM_SQUARES and zk_rms_scale of norm.cl (zinc_kernels.cl includes it first).
#include "zk_math.h"


// log(1 + u) for u >= 0 in f32 only: 1 + u as float-float (exact), hi = m * 2^e with m in
// [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(f), f = (m - 1) / (m + 1) (|f| <= 0.172, series to f^15,
// truncation < 2^-50), plus lo / hi; ln2 in two parts so e * L1 is exact. Error about 2 ulp
// (the cpu tier's log1pf is within 1): softplus only feeds the decay, held by the goldens'
// tolerances.
static inline float zk_log1pf(float u) {
    const zk_ff y = zk_two_sum(1.0f, u);
    const uint bits = as_uint(y.hi);
    int e = (int)((bits >> 23) & 0xffu) - 127;
    float m = as_float((bits & 0x7fffffu) | 0x3f800000u);  // [1, 2)
    if (m > 1.41421356f) {
        m *= 0.5f;
        e += 1;
    }
    const float f = (m - 1.0f) / (m + 1.0f), f2 = f * f;
    float p = 1.0f / 15.0f;
    p = p * f2 + 1.0f / 13.0f;
    p = p * f2 + 1.0f / 11.0f;
    p = p * f2 + 1.0f / 9.0f;
    p = p * f2 + 1.0f / 7.0f;
    p = p * f2 + 1.0f / 5.0f;
    p = p * f2 + 1.0f / 3.0f;
    const float L1 = 0.693145751953125f, L2 = 1.4286068202862268e-06f;  // ln2 = L1 + L2, L1 of 16 bits
    const float tail = (2.0f * f) * f2 * p + y.lo / y.hi;
    return (float)e * L1 + ((float)e * L2 + (2.0f * f + tail));
}

// ggml's softplus: linear above 20, where log1p(exp(x)) == x in float.
static inline float zk_softplus(float x) { return x > 20.0f ? x : zk_log1pf(zk_expf(x)); }

// out[t][ch] = silu(sum_k window[k][ch] * w[ch][k] + x[t][ch] * w[ch][taps - 1]), then the
// window moves up one row and takes x[t] as its newest (window: taps - 1 rows of `channels`,
// oldest first; w: [channel][taps], oldest tap first). One thread per channel owns its column.
// `window` is slot 0's copy; with `rows`, row t's slot's copy (above). Grid: x = ceil(channels /
// 64), y = tokens with rowOfGroup, else 1. Workgroup 64.
ZK_KERNEL(64) void ssm_conv(__global const float* x, __global float* window, __global const float* w, __global float* out,
                            __global const int* state, int channels, int taps, int tokens, int inStride, int outStride,
                            __global const int* rows, int slotFloats, int kvRows, int rowOfGroup) {
    const int ch = ZK_GROUP_X() * 64 + ZK_LID();
    if (ch >= channels) return;
    __global const float* wc = w + (long)ch * taps;
    const int first = rowOfGroup ? ZK_GROUP_Y() : 0, end = rowOfGroup ? first + 1 : tokens;
    for (int t = first; t < end; ++t) {
        __global float* win = rows ? window + (long)(rows[2 * t + 1] / kvRows) * slotFloats : window;
        const int clear = rows ? rows[2 * t] == 0 : t == 0 && state[0] == 0;
        out[(long)t * outStride + ch] = zk_conv_step(win, wc, channels, ch, taps, x[(long)t * inStride + ch], clear);
    }
}

// The gated delta rule, one workgroup per value head h (key head h mod keyHeads), thread j
// owning row j of the head's d x d state S (value dim j over key dims i), stored key-major
// (S[j][i] at i * d + j) so the threads of a step read it coalesced. Per token:
//   q, k = l2norm(q, k) (q also times qScale = 1/sqrt(d)), each sum of squares in float-float
//   decay = exp(softplus(alpha + dtBias) * a);  b = sigmoid(beta)
//   S = decay S;  S += b (v - S k) k^T;  out = S q    (the cpu tier's order of sums)
// qkv rows: q | k | v (keyHeads*d, keyHeads*d, valueHeads*d); alpha / beta rows of valueHeads.
// S is slot 0's copy; with `rows`, row t's slot's copy (above). Thread j alone touches column j
// of its head's matrix, so a clear needs no barrier. Grid: x = valueHeads, y = tokens with
// rowOfGroup, else 1. Workgroup 128 (d <= 128).
ZK_KERNEL(128) void delta_net(__global const float* qkv, __global const float* alpha, __global const float* beta,
                              __global float* out, __global float* S, __global const float* a, __global const float* dtBias,
                              __global const int* state, int d, int keyHeads, int tokens, int inStride, int gateStride,
                              int outStride, float eps, float qScale, __global const int* rows, int slotFloats, int kvRows,
                              int rowOfGroup) {
    __local float qHi[128], qLo[128], kHi[128], kLo[128];
    __local float q_[128], k_[128];
    const int vh = ZK_GROUP_X(), kh = vh % keyHeads, j = ZK_LID();
    const int keyDim = keyHeads * d;
    const int first = rowOfGroup ? ZK_GROUP_Y() : 0, end = rowOfGroup ? first + 1 : tokens;
    for (int t = first; t < end; ++t) {
        __global float* s = (rows ? S + (long)(rows[2 * t + 1] / kvRows) * slotFloats : S) + (long)vh * d * d;
        if ((rows ? rows[2 * t] == 0 : t == 0 && state[0] == 0) && j < d)
            for (int i = 0; i < d; ++i) s[i * d + j] = 0.0f;
        __global const float* row = qkv + (long)t * inStride;
        __global const float* q = row + kh * d;
        __global const float* k = row + keyDim + kh * d;
        zk_ff sumQ, sumK;
        ZK_SUM_SQUARES(128, q, d, qHi, qLo, sumQ)
        ZK_SUM_SQUARES(128, k, d, kHi, kLo, sumK)
        const float normQ = zk_sqrtf(sumQ.hi), normK = zk_sqrtf(sumK.hi);
        const float invQ = 1.0f / (normQ < eps ? eps : normQ) * qScale;  // std::max(norm, eps)
        const float invK = 1.0f / (normK < eps ? eps : normK) * 1.0f;
        if (j < d) {
            q_[j] = q[j] * invQ;
            k_[j] = k[j] * invK;
        }
        zk_barrier();
        const float decay = zk_expf(zk_softplus(alpha[(long)t * gateStride + vh] + dtBias[vh]) * a[vh]);
        const float b = zk_sigmoid(beta[(long)t * gateStride + vh]);
        if (j < d) {
            // The decayed state is recomputed in the second pass (the same rounded products the
            // cpu tier stores), so each element is written once per token, not twice.
            float sk = 0.0f;
            for (int i = 0; i < d; ++i) sk += s[i * d + j] * decay * k_[i];
            const float delta = (row[2 * keyDim + vh * d + j] - sk) * b;
            float o = 0.0f;
            for (int i = 0; i < d; ++i) {
                const float v = s[i * d + j] * decay + k_[i] * delta;
                s[i * d + j] = v;
                o += v * q_[i];
            }
            out[(long)t * outStride + vh * d + j] = o;
        }
        zk_barrier();  // q_, k_ and the partial sums are rewritten by the next token
    }
}

// Per head of n values: out = x * rms_scale(x) * w * silu(z), the sum of squares in float-float
// (the cpu tier sums in double). In place allowed (out == x): the sum is complete before any
// write. Grid: x = heads, y = tokens. Workgroup 128.
ZK_KERNEL(128) void gated_norm(__global const float* x, __global const float* z, __global const float* w, __global float* out,
                               int n, float eps, int inStride, int gateStride, int outStride) {
    __local float partialHi[128], partialLo[128];
    const int h = ZK_GROUP_X(), t = ZK_GROUP_Y();
    __global const float* xv = x + (long)t * inStride + (long)h * n;
    __global const float* zv = z + (long)t * gateStride + (long)h * n;
    __global float* y = out + (long)t * outStride + (long)h * n;
    zk_ff sum;
    ZK_SUM_SQUARES(128, xv, n, partialHi, partialLo, sum)
    const float scale = zk_rms_scale(sum, n, eps);
    for (int i = ZK_LID(); i < n; i += 128) y[i] = xv[i] * scale * w[i] * zk_silu(zv[i]);
}

// attn_q of the gated full-attention layers holds, per head, headDim query values then headDim
// gate values: out gets the queries, gate the gates. Grid: x = heads, y = tokens. Workgroup 64.
ZK_KERNEL(64) void split_gate(__global const float* in, __global float* out, __global float* gate, int headDim, int inStride,
                              int outStride, int gateStride) {
    const int h = ZK_GROUP_X(), t = ZK_GROUP_Y();
    __global const float* src = in + (long)t * inStride + 2l * h * headDim;
    for (int i = ZK_LID(); i < headDim; i += 64) {
        out[(long)t * outStride + (long)h * headDim + i] = src[i];
        gate[(long)t * gateStride + (long)h * headDim + i] = src[headDim + i];
    }
}

// out = x * sigmoid(gate): per element (the attention output gate), or with perToken one gate
// value per token (the shared expert's). In place allowed. x and out rows `stride` apart.
// Grid: x = ceil(n / 256), y = tokens. Workgroup 256.
ZK_KERNEL(256) void sigmoid_gate(__global const float* x, __global const float* gate, __global float* out, int n, int stride,
                                 int gateStride, int perToken) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID();
    if (i >= n) return;
    const int t = ZK_GROUP_Y();
    const float g = gate[(long)t * gateStride + (perToken ? 0 : i)];
    out[(long)t * stride + i] = x[(long)t * stride + i] * zk_sigmoid(g);
}

// dst[i] = src[i] for n 32-bit words: the recurrent state to its snapshot and back.
// Grid: x = ceil(n / 256). Workgroup 256.
ZK_KERNEL(256) void copy_words(__global const uint* src, __global uint* dst, int n) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID();  // 32-bit compare (the interpreter has no v_cmpx_*_i64)
    if (i < n) dst[i] = src[i];
}
