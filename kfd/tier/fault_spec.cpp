#include "kfd/tier/fault_spec.h"

#include <fmt/format.h>

#include <charconv>

#include "kfd/tier/graph_recorder.h"
#include "kfd/tier/op_marks.h"
#include "runtime/tier.h"

namespace zinc::kfd {
namespace {

std::optional<int32_t> number(std::string_view text) {
    int32_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
    return v;
}

}  // namespace

std::string FaultSpec::describe() const {
    std::string s = fmt::format("{} at position {}", injectedFaultName(kind), position);
    if (!op.empty()) s += layer >= 0 ? fmt::format(", op blk.{}.{}", layer, op) : ", op " + op;
    return s;
}

FaultSpec parseFaultSpec(std::string_view text) {
    const auto bad = [&](const std::string& why) {
        return runtime::TierError(fmt::format("ZINC_SIM_FAULT \"{}\": {} (KIND:POSITION:OP, e.g. hang:3:blk.1.attn_q; KIND fault, hang or fence)",
                                              text, why));
    };
    const size_t a = text.find(':');
    if (a == std::string_view::npos) throw bad("no position");
    const std::string_view kind = text.substr(0, a), rest = text.substr(a + 1);
    const size_t b = rest.find(':');
    const std::string_view position = rest.substr(0, b), op = b == std::string_view::npos ? std::string_view() : rest.substr(b + 1);
    FaultSpec spec;
    if (kind == "fault") spec.kind = InjectedFault::Kind::PageFault;
    else if (kind == "hang") spec.kind = InjectedFault::Kind::Hang;
    else if (kind == "fence") spec.kind = InjectedFault::Kind::BadFence;
    else throw bad(fmt::format("kind \"{}\"", kind));
    const std::optional<int32_t> p = number(position);
    if (!p) throw bad(fmt::format("position \"{}\" is not a number >= 0", position));
    spec.position = *p;
    if (op.empty() && spec.kind != InjectedFault::Kind::BadFence) throw bad("no op");
    if (op.substr(0, 4) == "blk.") {
        const size_t dot = op.find('.', 4);
        const std::optional<int32_t> layer = dot == std::string_view::npos ? std::nullopt : number(op.substr(4, dot - 4));
        if (!layer || dot + 1 >= op.size()) throw bad(fmt::format("op \"{}\" is not blk.LAYER.LABEL", op));
        spec.layer = *layer;
        spec.op = std::string(op.substr(dot + 1));
    } else {
        spec.op = std::string(op);
    }
    return spec;
}

std::optional<InjectedFault> aimFault(const FaultSpec& f, const RecordedPlan& plan, const OpMarks* marks, int32_t first,
                                      int32_t count, const FaultTarget& target, const std::string& tierName) {
    if (f.position < first || f.position >= first + count) return std::nullopt;
    InjectedFault fault{.kind = f.kind};
    if (f.kind == InjectedFault::Kind::BadFence) {
        fault.fenceAddress = target.fenceAddress;
        fault.fenceValue = target.fenceValue;
        return fault;
    }
    const OpMark* op = marks ? marks->find(f.layer, f.op) : nullptr;
    if (!op)
        throw runtime::TierError(fmt::format("{} tier: ZINC_SIM_FAULT {}: the {}-token plan has no such op (it has {})", tierName, f.describe(),
                                             plan.shape.nTokens, marks ? marks->names() : "no op marks"));
    const auto& ops = plan.built.ops;
    size_t dispatch = 0;
    while (dispatch < ops.size() && ops[dispatch].first < op->begin) ++dispatch;
    if (dispatch == ops.size() || ops[dispatch].first >= op->end)
        throw runtime::TierError(fmt::format("{} tier: ZINC_SIM_FAULT {}: the op has no dispatch", tierName, f.describe()));
    fault.kernargAddress = plan.built.kernargAddress(dispatch);
    fault.packetAddress = plan.built.ib.gpu() + uint64_t(ops[dispatch].first) * 4;
    fault.whenAddress = target.stateAddress;
    fault.whenValue = uint32_t(plan.shape.nTokens > 1 ? first : f.position);
    return fault;
}

}  // namespace zinc::kfd
