// Split attention's count for one token of n keys: attention_args.comp (the dispatch),
// attention_split.comp (its chunks) and attention.comp's merge (its partials) agree through it.
// Needs common.glsl.
// The plan's policy word (vulkan/op_attention.cpp AttentionOp::splitPolicy): the partials'
// stride, at most that many splits (bits 0-7); the count below which none grows (8-15); the split
// dispatch's head blocks (16-22); the GPU's compute units (23-31; 0: its residency is unknown).
// A token of c chunks of 64 keys takes min(c, stride) splits where the units are unknown or that
// is at most the base. Past it, the count whose busiest unit walks the fewest chunks: S splits
// put ceil(S blocks / units) workgroups on a unit, each walking ceil(c / S) chunks; for each
// count of workgroups a unit the largest S that gives it (the stride keeps them all resident),
// ties to the larger S. attention_args.comp picks it once a step (stepSplits reads it: the
// search in every workgroup cost 8B at depth 8192 5 %, run 176). H200, 0.6B at depth 8192 (129 chunks, 8 blocks, 3 workgroups of the
// kernel an SM): 32 splits, 10 chunks on the busiest SM, 628 tok/s; 33, 8, 644; 49, 9, 629.
#include "address.glsl"
const uint kPolicyChunk = 64u;  // attention_split.comp's chunk

uint policyStride(uint policy) { return policy & 0xFFu; }

// A token of n keys: one split a chunk, at most the stride.
uint policyMost(uint n, uint policy) { return min((n + kPolicyChunk - 1u) / kPolicyChunk, policyStride(policy)); }

// Whether a token of n keys takes more splits than policyMost could give it otherwise: the
// units are known and its chunks pass the base.
bool policyGrows(uint n, uint policy) {
    const uint base = (policy >> 8) & 0xFFu, blocks = (policy >> 16) & 0x7Fu, units = policy >> 23;
    return units != 0u && blocks != 0u && policyMost(n, policy) > base;
}

uint policySplits(uint n, uint policy) {
    const uint chunks = (n + kPolicyChunk - 1u) / kPolicyChunk;
    const uint base = (policy >> 8) & 0xFFu, blocks = (policy >> 16) & 0x7Fu, units = policy >> 23;
    const uint most = policyMost(n, policy);
    if (!policyGrows(n, policy)) return most;
    uint best = most, bestLoad = 0xFFFFFFFFu;
    const uint perUnit = (most * blocks + units - 1u) / units;
    for (uint w = 1u; w <= perUnit; ++w) {
        const uint s = clamp(w * units / blocks, base, most);
        const uint load = ((s * blocks + units - 1u) / units) * ((chunks + s - 1u) / s);
        if (load <= bestLoad) {
            best = s;
            bestLoad = load;
        }
    }
    return best;
}

// attention_args.comp's words (VkDispatchIndirectCommand, then policySplits of the step's
// length) sit kPolicyArgsBack bytes before the partials (vulkan/tier_memory.cpp: the args, the
// chained split's site at kSplitSiteOffset 128, kChainSiteBytes 128 x 65 long, the partials).
const uint kPolicyArgsBack = 128u + 128u * 65u;

// A kernel's count for a token of n keys. `whole`: the layer reads all of the token's keys (no
// window cuts them), so a grown policy's count is attention_args.comp's for this step; a window
// that cuts them takes min(c, stride) of its own (the dispatch covers it: min(c, stride) of the
// whole length).
uint stepSplits(uint n, bool whole, uint policy, FloatBuf partials) {
    if (!whole || !policyGrows(n, policy)) return policyMost(n, policy);  // no load where it cannot grow
    return uintsBefore(partials, kPolicyArgsBack).v[3];
}
