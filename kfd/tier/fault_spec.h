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

struct RecordedPlan;
class OpMarks;

// Where a submission's fault goes: the token state (its position word), the timeline fence and
// the value the submission writes there.
struct FaultTarget {
    uint64_t stateAddress = 0;
    uint64_t fenceAddress = 0, fenceValue = 0;
};

// The fault `spec` asks of a submission running `plan` (its ops: `marks`) for positions
// first..first + count - 1: at the op's first dispatch, while the token state holds the aimed
// position (a prefill step's state holds its first position), or at the submission's fence.
// nullopt when the spec aims at another position; TierError naming the ops when `plan` lacks it.
std::optional<InjectedFault> aimFault(const FaultSpec& spec, const RecordedPlan& plan, const OpMarks* marks, int32_t first,
                                      int32_t count, const FaultTarget& target, const std::string& tierName);

}  // namespace zinc::kfd
