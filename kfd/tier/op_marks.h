#pragma once
// The ops of a recorded plan by IB dword: where each op's packets begin and end, its layer and
// label. The tier names the op the CP was in when a queue faulted or hung ("layer 1, op
// 'attn_q'"), and tests aim an injected fault at an op by name.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace zinc::kfd {

struct OpMark {
    uint32_t begin = 0, end = 0;  // IB dwords [begin, end)
    int32_t layer = -1;           // -1: before or after the layer stack
    std::string label;
};

class OpMarks {
public:
    // The op whose packets end at IB dword `end` (called from the recorder's afterOp).
    void add(uint32_t end, const graph::Op& op);
    // "layer 1, op 'attn_q' (op 7 of 40)", "op 'lm_head' (op 40 of 40)"; "" past the last op.
    std::string describe(uint32_t dword) const;
    // The layer of the op at `dword`, or -1.
    int32_t layerAt(uint32_t dword) const;
    // The op `label` of `layer` (-1: outside the layer stack), or null.
    const OpMark* find(int32_t layer, std::string_view label) const;
    // "blk.0.attn_norm, blk.0.attn_q, ..." (for an error naming an op that is not there).
    std::string names(size_t most = 12) const;
    bool empty() const { return marks_.empty(); }

private:
    const OpMark* at(uint32_t dword) const;
    std::vector<OpMark> marks_;
};

}  // namespace zinc::kfd
