#version 450
// out = silu(a) * b (SwiGLU, mode 0), a + b (residual add, mode 1), a + b[i % bWidth] (a bias
// vector added to every row, mode 2) or gelu(a) * b (gemma3's GeGLU, mode 3), over n floats.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform PC {
    FloatBuf a;
    FloatBuf b;
    FloatBuf out_;
    uint n;
    uint mode;
    uint bWidth;
} pc;

// ggml's CPU GeGLU as the cpu tier computes it (runtime/cpu/ops_elementwise.cpp): outside
// (-10, 10) the gate is 0 or x; inside, GELU-tanh of the gate rounded to F16, rounded to F16
// (ggml's GELU table).
float geluGgml(float x) {
    if (x <= -10.0) return 0.0;
    if (x >= 10.0) return x;
    const float h = roundHalf(x);
    const float inner = 0.79788456080286535587989211986876 * h * (1.0 + 0.044715 * h * h);
    // tanh through the accurate exp: the driver's tanh may be coarse, and the F16 rounding
    // after it turns a few ulps into a flipped half.
    const float e = expAccurate(-2.0 * abs(inner));
    const float t = sign(inner) * (1.0 - e) / (1.0 + e);
    return roundHalf(0.5 * h * (1.0 + t));
}

void main() {
    const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
    if (i >= pc.n) return;
    const float x = pc.a.v[i], y = pc.b.v[pc.mode == 2u ? i % pc.bWidth : i];
    if (pc.mode == 3u) pc.out_.v[i] = geluGgml(x) * y;
    else pc.out_.v[i] = pc.mode == 0u ? swiglu(x, y) : x + y;
}
