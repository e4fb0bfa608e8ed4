#include "kfd/tier/op_marks.h"

#include <fmt/format.h>

namespace zinc::kfd {

void OpMarks::add(uint32_t end, const graph::Op& op) {
    const uint32_t begin = marks_.empty() ? 0 : marks_.back().end;
    marks_.push_back({begin, end, op.layer, op.label});
}

const OpMark* OpMarks::at(uint32_t dword) const {
    for (const OpMark& m : marks_)
        if (dword >= m.begin && dword < m.end) return &m;
    return nullptr;
}

std::string OpMarks::describe(uint32_t dword) const {
    const OpMark* m = at(dword);
    if (!m) return "";
    const size_t index = size_t(m - marks_.data()) + 1;
    return fmt::format("{}op '{}' (op {} of {})", m->layer >= 0 ? fmt::format("layer {}, ", m->layer) : "", m->label, index, marks_.size());
}

int32_t OpMarks::layerAt(uint32_t dword) const {
    const OpMark* m = at(dword);
    return m ? m->layer : -1;
}

const OpMark* OpMarks::find(int32_t layer, std::string_view label) const {
    for (const OpMark& m : marks_)
        if (m.layer == layer && m.label == label) return &m;
    return nullptr;
}

std::string OpMarks::names(size_t most) const {
    std::string s;
    for (size_t i = 0; i < marks_.size() && i < most; ++i)
        s += (i ? ", " : "") + (marks_[i].layer >= 0 ? fmt::format("blk.{}.{}", marks_[i].layer, marks_[i].label) : marks_[i].label);
    if (marks_.size() > most) s += fmt::format(", ... ({} ops)", marks_.size());
    return s;
}

}  // namespace zinc::kfd
