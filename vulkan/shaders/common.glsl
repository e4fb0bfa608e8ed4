// Shared by every zinc-rt compute shader: buffers are reached through device addresses
// passed in push constants (no descriptor sets), so one pipeline layout serves all shaders
// and a weight tensor larger than maxStorageBufferRange is still one pointer.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

// ZINC_CHAIN (quantize_signal, matvec_rows_chain: GraphRecorder's chained matvecs): the Vulkan
// memory model, the buffers non-private, so that a release by the quantize and an acquire by
// the matvec order the activations' writes and reads.
#ifdef ZINC_CHAIN
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
#define ZINC_MEM nonprivate
#else
#define ZINC_MEM
#endif

layout(buffer_reference, std430, buffer_reference_align = 4) ZINC_MEM buffer FloatBuf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) ZINC_MEM buffer IntBuf { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) ZINC_MEM buffer UintBuf { uint v[]; };
// Raw GGUF blocks: some block sizes (Q6_K 210, Q8_0 34 bytes) are only 2-byte aligned.
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer U16Buf { uint16_t v[]; };

// Token state (vulkan/token_state.h): ints.
const int kStatePosition = 0;
const int kStateNTokens = 1;
const int kStateKvLength = 2;
const int kStateStep = 3;
const int kStateRowsAt = 4;      // 0: token t at position + t in slot 0; else the per-row arrays
const int kStateRowsStride = 5;
const int kStateTokens = 8;

// RoPE of element i (< ropeDim) of a head, from the rope table ([position][ropeDim / 2] of
// (cos, sin)): it turns with element b by the angle of pair j, (a, b) = (i, i + half) for neox,
// (2j, 2j + 1) for the norm style (i is a or b). qk_rope.comp and attention_split.comp (FUSED)
// rotate through it, so that both give the same bits.
struct RopePair {
    uint a, b, j;
    bool first;  // i is a
};
RopePair ropePair(uint i, uint ropeDim, bool neox) {
    const uint half_ = ropeDim / 2u, j = neox ? i % half_ : i / 2u;
    return RopePair(neox ? j : 2u * j, neox ? j + half_ : 2u * j + 1u, j, neox ? i < half_ : (i % 2u) == 0u);
}
float ropeRotated(RopePair p, float xa, float xb, FloatBuf table, uint pos, uint ropeDim) {
    const uint at = 2u * (pos * (ropeDim / 2u) + p.j);
    const float c = table.v[at], s = table.v[at + 1u];
    return p.first ? xa * c - xb * s : xa * s + xb * c;
}

// Row t's position and the first KV cache row of its sequence slot (vulkan/token_state.h).
uint rowPosition(IntBuf state, uint t) {
    const int at = state.v[kStateRowsAt];
    return at == 0 ? uint(state.v[kStatePosition]) + t : uint(state.v[at + int(t)]);
}
uint rowSlotBase(IntBuf state, uint t) {
    const int at = state.v[kStateRowsAt];
    return at == 0 ? 0u : uint(state.v[at + state.v[kStateRowsStride] + int(t)]);
}
// The step's k-th wanted row (a step over several sequences only).
uint wantedRow(IntBuf state, uint k) {
    return uint(state.v[state.v[kStateRowsAt] + 2 * state.v[kStateRowsStride] + int(k)]);
}

// x rounded to the nearest binary16 value (ties to even), as a float. Done with integer ops
// because packHalf2x16's rounding is up to the driver; the F16 KV cache and the F16 attention
// accumulator must round exactly as the cpu tier (F16C, round to nearest even).
float roundHalf(float x) {
    const uint b = floatBitsToUint(x);
    const uint sign = b & 0x80000000u;
    uint a = b & 0x7fffffffu;
    if (a > 0x7f800000u) return x;                                // NaN
    if (a >= 0x477ff000u) return uintBitsToFloat(sign | 0x7f800000u);  // rounds past 65504
    if (a < 0x38800000u) {  // below 2^-14: a subnormal half, in steps of 2^-24
        const float q = roundEven(abs(x) * 16777216.0) * 5.9604644775390625e-8;
        return sign != 0u ? -q : q;
    }
    a += 0xfffu + ((a >> 13) & 1u);
    return uintBitsToFloat(sign | (a & 0xffffe000u));
}
float halfBits(uint bits) { return unpackHalf2x16(bits).x; }
// Two floats -> two halves in a word, rounded to nearest even whatever the driver's mode.
uint packHalves(float a, float b) { return packHalf2x16(vec2(roundHalf(a), roundHalf(b))); }

// a - q * b, with q * b exact as hi + lo (Dekker's product, Veltkamp's split at 12 bits). No
// fma: llvmpipe lowers fma to a multiply and an add (gallivm's lower_ffma32), not exact.
float residual(float a, float b, float q) {
    precise float cq = 4097.0 * q;
    precise float qh = cq - (cq - q);
    precise float ql = q - qh;
    precise float cb = 4097.0 * b;
    precise float bh = cb - (cb - b);
    precise float bl = b - bh;
    precise float hi = q * b;
    precise float lo = ((qh * bh - hi) + qh * bl + ql * bh) + ql * bl;
    precise float r = (a - hi) - lo;
    return r;
}

// a / b rounded to nearest, as the host divides (the sampler's chain, swiglu()): Vulkan lets x / y be
// 2.5 ulp off, and NVIDIA's 1 / x is 1 ulp off for some x (tests/vulkan/quantize_test.cpp's
// Q8_K scales, which quantize.comp leaves so: 1.7 % of 0.6B's decode). One Newton step
// on the residual brings the quotient within an ulp; of it and its two neighbours, the one
// with the smallest residual is the rounded quotient (the last rounding of the residual can
// only mislead for a quotient within ~2^-47 of halfway between two floats). For finite a and
// b whose quotient is a normal float or zero.
float divideExact(float a, float b) {
    precise float q = a / b;
    q = q + residual(a, b, q) / b;
    float best = q, r = abs(residual(a, b, q));
    for (int step = -1; step <= 1; step += 2) {
        const float c = uintBitsToFloat(uint(int(floatBitsToUint(q)) + step));
        const float rc = abs(residual(a, b, c));
        if (rc < r) {
            best = c;
            r = rc;
        }
    }
    return best;
}

// exp(x) to about 1 ulp (Cody-Waite reduction, degree-7 polynomial). Some drivers' exp is
// exp2(x * log2 e) on a coarse exp2, tens of ulps off for |x| ~ 10; the F16 accumulator of
// attention turns such errors into rounding flips the cpu tier does not make.
float expAccurate(float x) {
    if (x < -103.0) return 0.0;
    if (x > 88.7) return uintBitsToFloat(0x7f800000u);
    precise float k = roundEven(x * 1.44269504);
    precise float r = fma(-k, 0.693145752, x);
    r = fma(-k, 1.42860677e-6, r);
    precise float p = 1.98412698e-4;
    p = fma(p, r, 1.38888889e-3);
    p = fma(p, r, 8.33333333e-3);
    p = fma(p, r, 4.16666667e-2);
    p = fma(p, r, 1.66666667e-1);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    return ldexp(p, int(k));
}

// SwiGLU's silu(gate) * up, written once for every shader that computes it (quantize.comp's
// prologue, elementwise, the matvecs' and matmuls' epilogues), from expAccurate and
// divideExact: the driver's exp and division may be compiled differently in each shader (on
// the H200 a batch of rows and the same rows alone, taking it from different pipelines,
// differed), these are the same instructions everywhere. Below about -88.7 the gate's silu is 0.
float swiglu(float gate, float up) {
    precise float d = 1.0 + expAccurate(-gate);
    if (isinf(d)) return 0.0 * up;
    precise float r = divideExact(gate, d) * up;
    return r;
}

// Byte-offset readers over 2-byte aligned raw blocks.
uint rd16(U16Buf b, uint byteOff) { return uint(b.v[byteOff >> 1]); }
uint rd32(U16Buf b, uint byteOff) { return uint(b.v[byteOff >> 1]) | (uint(b.v[(byteOff >> 1) + 1]) << 16); }
uint rd8(U16Buf b, uint byteOff) { return (uint(b.v[byteOff >> 1]) >> ((byteOff & 1u) * 8u)) & 0xFFu; }
float rdHalf(U16Buf b, uint byteOff) { return halfBits(rd16(b, byteOff)); }
// Eight words from a 2-byte aligned byte offset through nine aligned 32-bit loads, whatever
// the offset (the ninth word lies in the block or in the 16 bytes past each tensor,
// weight_store.cpp): without a branch on the alignment, which differs between the blocks of
// one subgroup (Q6_K's 210 bytes, Q3_K's 110), so both sides would be issued. `branch`
// (a constant): eight loads where aligned, for callers short of registers.
void rd32x8(UintBuf b, uint byteOff, out uint words[8], bool branch) {
    const uint i0 = byteOff >> 2, sh = (byteOff & 2u) * 8u;  // 0 or 16
    if (branch && sh == 0u) {
        for (uint i = 0u; i < 8u; ++i) words[i] = b.v[i0 + i];
        return;
    }
    uint prev = b.v[i0];
    for (uint i = 0u; i < 8u; ++i) {
        const uint next = b.v[i0 + i + 1u];
        words[i] = (prev >> sh) | ((next << 16) << (16u - sh));  // sh 0: prev alone
        prev = next;
    }
}

// Workgroup-wide sum for any subgroup size: subgroups reduce, then one subgroup sums the
// partials. `scratch` must hold gl_NumSubgroups floats.
#define WORKGROUP_SUM_DECL(NAME, MAXSG) shared float NAME[MAXSG];
