#include "tools/trace/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace zinc::trace {
namespace {

// Every kind a graph (not a lowered graph) holds: those before the lowered-only ones (graph.h).
constexpr size_t kGraphOpKinds = static_cast<size_t>(graph::OpKind::Quantize);
double ms(int64_t ns) { return static_cast<double>(ns) * 1e-6; }

std::string bar(double share) {
    return std::string(static_cast<size_t>(std::lround(std::clamp(share, 0.0, 1.0) * 30)), '#');
}

void addGaps(const Timeline& t, Summary& s) {
    double hostGap = 0, deviceGap = 0;
    int hostGaps = 0, deviceGaps = 0;
    for (size_t i = 0; i + 1 < t.tokens.size(); ++i) {
        const TokenRecord &a = t.tokens[i], &b = t.tokens[i + 1];
        if (b.step != a.step + 1) continue;  // something else ran in between
        hostGap += ms(b.stepBegin - a.stepEnd);
        ++hostGaps;
        if (a.hasDevice && b.hasDevice) {
            deviceGap += ms(b.deviceBegin - a.deviceEnd);
            ++deviceGaps;
        }
    }
    s.hostGapMs = hostGaps ? hostGap / hostGaps : 0;
    s.deviceGapMs = deviceGaps ? deviceGap / deviceGaps : 0;
}

}  // namespace

Summary summarize(const Timeline& t) {
    Summary s;
    s.tier = t.tier;
    s.device = t.device;
    s.tokens = static_cast<int32_t>(t.tokens.size());
    if (t.tokens.empty()) return s;
    const graph::Graph& g = *t.graph;
    std::vector<double> kindMs(kGraphOpKinds, 0);
    std::vector<int32_t> kindOps(kGraphOpKinds, 0);
    int32_t nLayers = 0;
    for (const auto& op : g.ops) nLayers = std::max(nLayers, op.layer + 1);
    std::vector<LayerTime> layers(static_cast<size_t>(nLayers) + 1);
    for (size_t l = 0; l < layers.size(); ++l) {
        layers[l].layer = l < static_cast<size_t>(nLayers) ? static_cast<int32_t>(l) : -1;
        layers[l].msByKind.assign(kGraphOpKinds, 0);
    }
    size_t opEvents = 0;
    for (const TokenRecord& token : t.tokens) {
        s.stepMs += ms(token.stepEnd - token.stepBegin);
        s.waitMs += ms(token.waitNs);
        s.tokenMs += ms(token.tokenNs());
        if (token.hasDevice) s.deviceMs += ms(token.deviceEnd - token.deviceBegin);
        s.hasDevice |= token.hasDevice;
        s.submissionsPerToken += token.submissions;
        opEvents += token.ops.size();
        if (!token.ops.empty()) {
            int64_t lastEnd = t.events[token.ops.front()].endNs;
            for (size_t index : token.ops) lastEnd = std::max(lastEnd, t.events[index].endNs);
            s.beforeOpsMs += ms(t.events[token.ops.front()].beginNs - token.tokenBegin());
            s.afterOpsMs += ms(token.tokenBegin() + token.tokenNs() - lastEnd);
        }
        for (size_t index : token.ops) {
            const runtime::Event& e = t.events[index];
            const graph::Op& op = g.ops[static_cast<size_t>(e.op)];
            const double d = ms(e.endNs - e.beginNs);
            const auto kind = static_cast<size_t>(op.kind);
            kindMs[kind] += d;
            LayerTime& layer = layers[op.layer >= 0 ? static_cast<size_t>(op.layer) : layers.size() - 1];
            layer.msPerToken += d;
            layer.msByKind[kind] += d;
        }
    }
    for (const auto& op : g.ops) ++kindOps[static_cast<size_t>(op.kind)];
    const double n = static_cast<double>(s.tokens);
    for (double* v : {&s.stepMs, &s.waitMs, &s.tokenMs, &s.deviceMs, &s.submissionsPerToken, &s.beforeOpsMs, &s.afterOpsMs})
        *v /= n;
    s.hostMs = s.stepMs - s.waitMs;
    s.opEventsPerToken = static_cast<int32_t>(opEvents / t.tokens.size());
    for (auto& layer : layers) {
        layer.msPerToken /= n;
        for (double& v : layer.msByKind) v /= n;
        (layer.layer >= 0 ? s.layersMs : s.outsideMs) += layer.msPerToken;
    }
    s.opsMs = s.layersMs + s.outsideMs;
    s.byLayer = std::move(layers);
    for (size_t k = 0; k < kGraphOpKinds; ++k)
        if (kindOps[k] > 0) s.byKind.push_back({graph::opKindName(static_cast<graph::OpKind>(k)), kindMs[k] / n, kindOps[k]});
    std::stable_sort(s.byKind.begin(), s.byKind.end(), [](const KindTime& a, const KindTime& b) { return a.msPerToken > b.msPerToken; });
    addGaps(t, s);
    const int64_t span = t.tokens.back().stepEnd - t.tokens.front().stepBegin;
    s.tokensPerSecond = span > 0 ? n / (static_cast<double>(span) * 1e-9) : 0;
    return s;
}

std::string formatSummary(const Summary& s) {
    std::string out = fmt::format("trace: {} decode tokens on {}\n", s.tokens, s.device);
    if (s.tokens == 0) return out + "no decode tokens were traced\n";
    out += fmt::format("per token: {:.3f} ms per evaluate() call, of which the host's own {:.3f} ms and waiting {:.3f} ms",
                       s.stepMs, s.hostMs, s.waitMs);
    if (s.hasDevice) out += fmt::format("; device {:.3f} ms, {:.2f} submissions", s.deviceMs, s.submissionsPerToken);
    out += fmt::format("; {} op events\n", s.opEventsPerToken);
    out += fmt::format("between tokens: host idle {:.3f} ms", s.hostGapMs);
    if (s.hasDevice) out += fmt::format(", device idle {:.3f} ms", s.deviceGapMs);
    out += fmt::format("; {:.1f} tok/s\n", s.tokensPerSecond);
    const double share = s.tokenMs > 0 ? s.opsMs / s.tokenMs : 0;
    out += fmt::format("ops: {:.3f} ms per token = layers {:.3f} + outside the layers {:.3f}, {:.1f} % of the token's {:.3f} ms ({})\n",
                       s.opsMs, s.layersMs, s.outsideMs, 100 * share, s.tokenMs, s.hasDevice ? "device span" : "evaluate() call");
    out += fmt::format("not in an op: {:.3f} ms before the first op, {:.3f} ms after the last ({})\n", s.beforeOpsMs, s.afterOpsMs,
                       s.hasDevice ? "the logits copy or the sampled token" : "the host's work around the graph");
    out += "\ntime per op kind (ms per token):\n";
    for (const KindTime& k : s.byKind)
        out += fmt::format("  {:<12} {:>3} ops {:>9.3f}  {:>5.1f} %  {}\n", k.kind, k.opsPerToken, k.msPerToken,
                           s.opsMs > 0 ? 100 * k.msPerToken / s.opsMs : 0, bar(s.opsMs > 0 ? k.msPerToken / s.opsMs : 0));
    out += "\ntime per layer (ms per token):\n";
    for (const LayerTime& l : s.byLayer)
        out += fmt::format("  {:<10} {:>9.3f}  {:>5.1f} %  {}\n", l.layer >= 0 ? fmt::format("layer {}", l.layer) : "outside",
                           l.msPerToken, s.opsMs > 0 ? 100 * l.msPerToken / s.opsMs : 0,
                           bar(s.opsMs > 0 ? l.msPerToken / s.opsMs : 0));
    return out;
}

}  // namespace zinc::trace
