// Chained dispatches (ZINC_CHAIN; vulkan/plan_context.h "chained"): a dispatch recorded with no
// barrier after the one that writes its input waits for it in the kernel. The producer's
// workgroups, their writes done, each count themselves with release semantics on `lines` lines
// of a site (128 bytes apart, after a first line left free); a consumer workgroup's thread 0
// polls one line until the count it expects, acquires, and a workgroup barrier passes the
// visibility on to its other threads. Needs common.glsl under ZINC_CHAIN (the Vulkan memory
// model, buffers non-private) and workgroups of at least `lines` threads.
#extension GL_EXT_buffer_reference_uvec2 : require
#include "address.glsl"
const uint kChainLines = 64u;  // vulkan/plan_context.h kChainLines

void chainSignal(UintBuf site, uint lines) {
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                   gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable);
    const uint tid = gl_LocalInvocationID.x;
    if (tid < lines)
        atomicAdd(site.v[32u * (tid + 1u)], 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
}

void chainWait(UintBuf site, uint line, uint count) {
    if (gl_LocalInvocationID.x == 0u) {
        while (atomicLoad(site.v[32u * (1u + line)], gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed) < count) {}
        memoryBarrier(gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
    }
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                   gl_SemanticsAcquireRelease | gl_SemanticsMakeVisible);
}

// Buffer writes of this workgroup visible to its own later reads (memoryBarrier() and barrier()
// without the memory model).
void workgroupBufferBarrier() {
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                   gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
}

// Split attention's site (attention_split.comp signals, attention.comp waits): the
// kChainSiteBytes before the partials (vulkan/tier_memory.cpp), one for the whole plan, so each
// layer's merge waits for a running count (PlanContext::Chain::splitsChained, plan_context.h
// kSplitSiteOffset). Its workgroups poll kSplitLines lines: a merge has few.
const uint kChainSiteBytes = 128u * (1u + kChainLines);
const uint kSplitLines = 16u;
UintBuf splitSite(FloatBuf partials) { return uintsBefore(partials, kChainSiteBytes); }
