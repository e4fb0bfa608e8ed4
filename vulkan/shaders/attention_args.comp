#version 450
// The split attention's workgroup counts for this step, from the current KV length in the
// token-state block: one split per 64 keys (a chunk) of the step's longest row (a sequence's last
// token), at most the policy's stride (split_policy.glsl), none up to exactMax (attention.comp then computes exactly; one
// where the split kernel is FUSED, to rotate and store the step); one z per token. Each
// workgroup then keeps to its own token's split count (attention_split.comp).
// Written once per plan, read by every layer's vkCmdDispatchIndirect, so a short chat costs its
// own length whatever the context size.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "split_policy.glsl"

layout(local_size_x = 1) in;
layout(push_constant) uniform PC {
    IntBuf state;
    UintBuf args;  // VkDispatchIndirectCommand {x, y, z}
    uint nHead;  // y: head blocks (attention_split.comp's GQ query heads each)
    uint policy;  // split_policy.glsl
    uint exactMax;
    uint tokens;  // the plan's tokens (rows): z; x follows the row with the most keys
    uint atLeast;  // 1 where the split kernel also rotates and stores the step (its FUSED variant)
    uint windows;  // 1 where a layer of the plan reads a sliding window
} pc;

void main() {
    uint n = uint(pc.state.v[kStatePosition]) + pc.tokens;  // one sequence: its last token
    if (pc.state.v[kStateRowsAt] != 0) {  // rows of several sequences, each at its own position
        n = 0u;
        for (uint t = 0u; t < pc.tokens; ++t) n = max(n, rowPosition(pc.state, t) + 1u);
    }
    // The step's count (split_policy.glsl), or where a layer reads a sliding window every split
    // a layer's token may take: a window's layer takes min(c, stride) of its own keys, and the
    // policy's count is not monotonic in n (workgroups past a token's count return at once:
    // H200, 0.6B at depth 8192, 49 dispatched for 33 working: 633 -> 623 tok/s, run 177).
    const uint splits = policySplits(n, pc.policy);
    const uint most = pc.windows != 0u ? policyMost(n, pc.policy) : splits;
    pc.args.v[0] = max(n <= pc.exactMax ? 0u : most, pc.atLeast);
    pc.args.v[1] = pc.nHead;
    pc.args.v[2] = pc.tokens;
    pc.args.v[3] = splits;  // a one-token step's count (split_policy.glsl stepSplits)
}
