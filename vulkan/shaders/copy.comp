#version 450
// dst = src, 16 bytes a thread and step: the bandwidth reference of `bench --kernels`
// (vulkan/kernel_bench.cpp), timed like the matvecs it is compared with.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x = 256) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Uvec4Buf { uvec4 v[]; };
layout(push_constant) uniform PC {
    Uvec4Buf src;
    Uvec4Buf dst;
    uint n;  // 16-byte words
} pc;

void main() {
    const uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) pc.dst.v[i] = pc.src.v[i];
}
