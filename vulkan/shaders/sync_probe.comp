#version 450
// bench --kernels' two ways of ordering dependent steps, with no work between them:
// `steps` 0 is an empty dispatch (a plan's step costs at least that plus its barrier); `steps`
// N > 0 is one dispatch whose workgroups meet N times at a grid barrier on a device-memory
// counter (the synchronisation a persistent decode kernel would put between ops). A grid
// barrier needs every workgroup resident at once: each wait gives up after `spinLimit` polls
// and counts the give-up in counter[1], so a grid too large for the device ends (with a
// count) instead of hanging the queue.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x = 256) in;
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer Counters { uint v[]; };
layout(push_constant) uniform PC {
    Counters counter;  // [0] arrivals (zero before the dispatch), [1] waits given up
    uint steps;
    uint spinLimit;
} pc;

void main() {
    const uint groups = gl_NumWorkGroups.x;
    for (uint s = 1u; s <= pc.steps; ++s) {
        barrier();
        if (gl_LocalInvocationID.x == 0u) {
            atomicAdd(pc.counter.v[0], 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
            uint spins = 0u;
            while (atomicLoad(pc.counter.v[0], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire) < s * groups &&
                   spins < pc.spinLimit)
                ++spins;
            if (spins == pc.spinLimit) atomicAdd(pc.counter.v[1], 1u);
        }
        barrier();
    }
}
