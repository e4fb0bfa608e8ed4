// graph::fuse (graph/lower.h): each pass walks the lowered ops once and replaces a matched
// sequence by one fused op when the tier accepts it. Passes only match unfused kinds, so their
// order decides nothing but which of two overlapping candidates is tried first.
#include <algorithm>
#include <optional>

#include "graph/lower.h"

namespace zinc::graph {
namespace {

using Ops = std::vector<LoweredOp>;

bool isHeadOp(const LoweredOp& l) { return l.op.kind == OpKind::HeadNorm || l.op.kind == OpKind::Rope; }

// Fields the fused kernels do not carry: a MatMul's bias, a Rope's rope_freqs or sliding-window
// base, an Attention's window, a SwiGlu's GeGLU. Sequences with one of them are left unfused.
bool hasUnfusedField(const Op& op) {
    return op.bias != nullptr || op.window != 0 || op.gelu || (op.kind == OpKind::Rope && op.weight != nullptr);
}

// [HeadNorm q, HeadNorm k,] Rope q, Rope k right before an Attention, each on its q or k.
Ops fuseAttention(Ops ops, const Accepts& accepts) {
    Ops out;
    for (LoweredOp& l : ops) {
        if (l.op.kind != OpKind::Attention || hasUnfusedField(l.op)) {
            out.push_back(std::move(l));
            continue;
        }
        size_t start = out.size();
        while (start > 0 && isHeadOp(out[start - 1]) && (out[start - 1].op.in == l.op.in || out[start - 1].op.in == l.op.k)) --start;
        bool ropeQ = false, ropeK = false;
        LoweredOp fused = l;
        fused.op.kind = OpKind::QkRopeAttention;
        for (size_t h = start; h < out.size(); ++h) {
            const LoweredOp& head = out[h];
            const bool onQ = head.op.in == l.op.in;
            if (head.op.kind == OpKind::Rope) (onQ ? ropeQ : ropeK) = true;
            else (onQ ? fused.qNorm : fused.kNorm) = head.op.weight;
        }
        const bool plain = std::none_of(out.begin() + long(start), out.end(), [](const LoweredOp& h) { return hasUnfusedField(h.op); });
        if (ropeQ && ropeK && plain) {  // the fused kernels always rotate both
            fused.first = out[start].first;
            fused.count = l.first + l.count - fused.first;
            if (accepts(fused)) {
                out.resize(start);
                out.push_back(std::move(fused));
                continue;
            }
        }
        out.push_back(std::move(l));
    }
    return out;
}

// MatMul gate, MatMul up of the same input, SwiGlu of the two into gate's buffer.
Ops fuseGateUp(Ops ops, const Accepts& accepts) {
    Ops out;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (i + 2 < ops.size()) {
            const LoweredOp &gate = ops[i], &up = ops[i + 1], &glu = ops[i + 2];
            if (gate.op.kind == OpKind::MatMul && up.op.kind == OpKind::MatMul && glu.op.kind == OpKind::SwiGlu &&
                up.op.in == gate.op.in && up.act == gate.act && glu.op.in == gate.op.out && glu.op.up == up.op.out &&
                glu.op.out == gate.op.out && !hasUnfusedField(gate.op) && !hasUnfusedField(up.op) && !hasUnfusedField(glu.op)) {
                LoweredOp fused = gate;
                fused.op.kind = OpKind::GateUpSwiGlu;
                fused.op.upWeight = up.op.weight;
                fused.upAct = up.act;
                fused.count = glu.first + glu.count - gate.first;
                if (accepts(fused)) {
                    out.push_back(std::move(fused));
                    i += 2;
                    continue;
                }
            }
        }
        out.push_back(std::move(ops[i]));
    }
    return out;
}

// Two adjacent ops into one: `match` builds the candidate for (a, b) or returns nullopt.
template <class Match>
Ops fusePairs(Ops ops, const Accepts& accepts, Match match) {
    Ops out;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (i + 1 < ops.size())
            if (std::optional<LoweredOp> fused = match(ops[i], ops[i + 1]); fused && accepts(*fused)) {
                out.push_back(std::move(*fused));
                ++i;
                continue;
            }
        out.push_back(std::move(ops[i]));
    }
    return out;
}

// SwiGlu, then the Quantize of its output: silu(gate) * up goes straight into the quantized buffer.
std::optional<LoweredOp> swiGluQuantize(const LoweredOp& glu, const LoweredOp& q) {
    if (glu.op.kind != OpKind::SwiGlu || q.op.kind != OpKind::Quantize || q.op.in != glu.op.out || hasUnfusedField(glu.op))
        return std::nullopt;
    LoweredOp fused = glu;
    fused.op.kind = OpKind::SwiGluQuantize;
    fused.format = q.format;
    fused.quantized = q.quantized;
    return fused;
}

// A projection (or the expert FFN) whose output the next op adds into the residual.
std::optional<LoweredOp> residualAdd(const LoweredOp& l, const LoweredOp& add) {
    if ((l.op.kind != OpKind::MatMul && l.op.kind != OpKind::MoeFfn) || add.op.kind != OpKind::Add || add.op.addend != l.op.out ||
        add.op.out != add.op.in || add.op.in == l.op.out || add.lastRowOnly != l.lastRowOnly || hasUnfusedField(l.op))
        return std::nullopt;
    LoweredOp fused = l;
    fused.op.kind = l.op.kind == OpKind::MatMul ? OpKind::MatMulAdd : OpKind::MoeFfnAdd;
    fused.op.out = add.op.out;
    fused.count = add.first + add.count - l.first;
    return fused;
}

bool writes(const LoweredOp& l, BufferId id) {
    const auto w = writesOf(l.op);
    return std::find(w.begin(), w.end(), id) != w.end() || l.quantized == id;
}

// RmsNorm and the first Quantize of its output, when nothing between writes the norm's output
// or touches the quantized buffer (the quantization moves up to the norm).
Ops fuseNormQuantize(Ops ops, const Accepts& accepts) {
    std::vector<bool> erased(ops.size(), false);
    for (size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].op.kind != OpKind::RmsNorm) continue;
        const BufferId normed = ops[i].op.out;
        size_t j = i + 1;
        while (j < ops.size() && !(ops[j].op.kind == OpKind::Quantize && ops[j].op.in == normed) && !writes(ops[j], normed)) ++j;
        if (j == ops.size() || ops[j].op.kind != OpKind::Quantize) continue;
        const BufferId slot = ops[j].quantized;
        const bool clear = std::none_of(ops.begin() + long(i) + 1, ops.begin() + long(j), [&](const LoweredOp& l) {
            const bool downInto = (l.op.kind == OpKind::MoeFfn || l.op.kind == OpKind::MoeFfnAdd) && l.downFormat == ops[j].format;
            return l.act == slot || l.upAct == slot || l.quantized == slot || downInto;
        });
        if (!clear) continue;
        LoweredOp fused = ops[i];
        fused.op.kind = OpKind::NormQuantize;
        fused.format = ops[j].format;
        fused.quantized = slot;
        if (!accepts(fused)) continue;
        ops[i] = std::move(fused);
        erased[j] = true;
    }
    Ops out;
    for (size_t i = 0; i < ops.size(); ++i)
        if (!erased[i]) out.push_back(std::move(ops[i]));
    return out;
}

}  // namespace

void fuse(Lowered& lowered, const Accepts& accepts) {
    Ops ops = std::move(lowered.ops);
    ops = fuseAttention(std::move(ops), accepts);
    ops = fuseGateUp(std::move(ops), accepts);
    ops = fusePairs(std::move(ops), accepts, swiGluQuantize);
    ops = fuseNormQuantize(std::move(ops), accepts);
    ops = fusePairs(std::move(ops), accepts, residualAdd);
    lowered.ops = std::move(ops);
}

}  // namespace zinc::graph
