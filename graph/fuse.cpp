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

// GatedNorm or SigmoidGate, then the Quantize of its output (the next projection's input):
// the quantizer computes the op on the way in and still writes its F32 output.
std::optional<LoweredOp> gateQuantize(const LoweredOp& gate, const LoweredOp& q) {
    const OpKind kind = gate.op.kind == OpKind::GatedNorm     ? OpKind::GatedNormQuantize
                        : gate.op.kind == OpKind::SigmoidGate ? OpKind::SigmoidGateQuantize
                                                              : OpKind::Quantize;
    if (kind == OpKind::Quantize || q.op.kind != OpKind::Quantize || q.op.in != gate.op.out || q.lastRowOnly != gate.lastRowOnly)
        return std::nullopt;
    LoweredOp fused = gate;
    fused.op.kind = kind;
    fused.format = q.format;
    fused.quantized = q.quantized;
    return fused;
}

// A MatMul whose output only the SsmConv right after it reads: the conv runs on the projection's
// rows as they are summed, and the projection's own output is never written.
Ops fuseMatMulConv(Ops ops, const Accepts& accepts) {
    Ops out;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (i + 1 < ops.size()) {
            const LoweredOp &mm = ops[i], &conv = ops[i + 1];
            const BufferId projected = mm.op.out;
            // Nothing after the conv reads the projection before something writes it again.
            const auto readLater = [&] {
                for (size_t j = i + 2; j < ops.size(); ++j) {
                    const auto r = readsOf(ops[j].op);
                    if (std::find(r.begin(), r.end(), projected) != r.end()) return true;
                    if (writes(ops[j], projected)) return false;
                }
                return false;
            };
            if (mm.op.kind == OpKind::MatMul && conv.op.kind == OpKind::SsmConv && conv.op.in == projected && mm.count > 0 &&
                mm.lastRowOnly == conv.lastRowOnly && !hasUnfusedField(mm.op) && !readLater()) {
                LoweredOp fused = mm;
                fused.op.kind = OpKind::MatMulConv;
                fused.op.out = conv.op.out;
                fused.op.state = conv.op.state;
                fused.op.convWeight = conv.op.weight;
                fused.count = conv.first + conv.count - mm.first;
                if (accepts(fused)) {
                    out.push_back(std::move(fused));
                    ++i;
                    continue;
                }
            }
        }
        out.push_back(std::move(ops[i]));
    }
    return out;
}

bool touches(const LoweredOp& l, BufferId id) {
    const auto r = readsOf(l.op);
    return writes(l, id) || std::find(r.begin(), r.end(), id) != r.end();
}

// The shared expert of qwen35moe after the routed experts: MoeFfn into `proj`, the shared
// expert's projections, then its input gate (a one-row F32 MatMul of the FFN input), the
// sigmoid of that gate on its output, the add into `proj` and the residual add of `proj`.
// Becomes MoeExperts (the expert rows only) and, in the gate's place, MoeSharedAdd: one pass
// that sums the experts, adds the gated shared expert and accumulates into the residual.
Ops fuseMoeShared(Ops ops, const Accepts& accepts) {
    for (size_t i = 0; i < ops.size(); ++i) {
        const LoweredOp& ffn = ops[i];
        if (ffn.op.kind != OpKind::MoeFfn || ffn.lastRowOnly) continue;
        const BufferId proj = ffn.op.out;
        size_t j = i + 1;  // the input gate: the first op reading the FFN input into a 1-wide buffer
        while (j < ops.size() && !(ops[j].op.kind == OpKind::MatMul && ops[j].op.in == ffn.op.in && ops[j].count > 0 &&
                                   ops[j].act == kNoBuffer && ops[j].op.weight->rows == 1))
            ++j;
        if (j + 3 >= ops.size()) continue;
        const LoweredOp &gate = ops[j], &sig = ops[j + 1], &shAdd = ops[j + 2], &res = ops[j + 3];
        const BufferId shared = sig.op.in;
        if (hasUnfusedField(gate.op) || sig.op.kind != OpKind::SigmoidGate || sig.op.gate != gate.op.out || sig.op.out != shared ||
            shAdd.op.kind != OpKind::Add || shAdd.op.in != proj || shAdd.op.out != proj || shAdd.op.addend != shared ||
            res.op.kind != OpKind::Add || res.op.addend != proj || res.op.in != res.op.out || res.op.in == proj ||
            res.lastRowOnly || sig.lastRowOnly || shAdd.lastRowOnly || gate.lastRowOnly)
            continue;
        // Nothing between may see proj, the residual, the gate or the routing, or change the input.
        const bool clear = std::none_of(ops.begin() + long(i) + 1, ops.begin() + long(j), [&](const LoweredOp& l) {
            return touches(l, proj) || touches(l, res.op.out) || touches(l, gate.op.out) || touches(l, ffn.op.expertWeights) ||
                   writes(l, ffn.op.in);
        });
        if (!clear) continue;
        LoweredOp experts = ffn;
        experts.op.kind = OpKind::MoeExperts;
        LoweredOp tail = gate;
        tail.op.kind = OpKind::MoeSharedAdd;
        tail.op.label = "moe_combine";
        tail.op.addend = shared;
        tail.op.expertWeights = ffn.op.expertWeights;
        tail.op.expertIds = ffn.op.expertIds;  // the order of the sum (the PM4 tier's, as MoeFfn's)
        tail.op.out = res.op.out;
        tail.count = res.first + res.count - gate.first;
        if (!accepts(experts) || !accepts(tail)) continue;
        ops[i] = std::move(experts);
        ops[j] = std::move(tail);
        ops.erase(ops.begin() + long(j) + 1, ops.begin() + long(j) + 4);
    }
    return ops;
}

}  // namespace

void fuse(Lowered& lowered, const Accepts& accepts) {
    Ops ops = std::move(lowered.ops);
    ops = fuseAttention(std::move(ops), accepts);
    ops = fuseGateUp(std::move(ops), accepts);
    ops = fusePairs(std::move(ops), accepts, swiGluQuantize);
    ops = fuseNormQuantize(std::move(ops), accepts);
    ops = fusePairs(std::move(ops), accepts, residualAdd);
    ops = fusePairs(std::move(ops), accepts, gateQuantize);
    ops = fuseMoeShared(std::move(ops), accepts);
    ops = fuseMatMulConv(std::move(ops), accepts);
    lowered.ops = std::move(ops);
}

}  // namespace zinc::graph
