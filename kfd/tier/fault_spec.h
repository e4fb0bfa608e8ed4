#pragma once
// Which fault the simulated GPU is to make, and where (tests; `ZINC_SIM_FAULT=KIND:POSITION:OP`
// with --sim): KIND is fault (a page fault: the op's first dispatch reads its kernarg segment from
// an unmapped address), hang (the CP stops at the op's first packet and never goes on) or fence
// (the timeline fence of the submission is written with a wrong value; OP may be left out);
// POSITION is the token's position in the sequence (the first token to run there); OP is the op
// of the lowered plan, `blk.N.LABEL` for layer N or `LABEL` after the layer stack (`output_norm`,
// `lm_head`). Examples: `hang:3:blk.1.attn_q`, `fault:0:blk.0.ffn_down`, `fence:2`.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kfd/device/device.h"

namespace zinc::kfd {

struct FaultSpec {
    InjectedFault::Kind kind = InjectedFault::Kind::PageFault;
    int32_t position = 0;
    int32_t layer = -1;  // -1: an op after the layer stack
    std::string op;      // the op's label ("attn_q"); empty only for a fence
    std::string describe() const;  // "hang at position 3, op blk.1.attn_q"
};

// Throws runtime::TierError naming the part of `text` that is wrong.
FaultSpec parseFaultSpec(std::string_view text);

}  // namespace zinc::kfd
