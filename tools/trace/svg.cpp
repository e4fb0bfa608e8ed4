#include "tools/trace/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace zinc::trace {
namespace {

using runtime::Event;
using runtime::EventKind;

constexpr size_t kColouredKinds = static_cast<size_t>(graph::OpKind::MoeFfn) + 1;
// One colour per graph::OpKind, in its order (embed .. moe_ffn).
constexpr std::array<const char*, kColouredKinds> kKindColours = {"#8c564b", "#17becf", "#1f77b4", "#9edae5", "#bcbd22",
                                                             "#d62728", "#2ca02c", "#7f7f7f", "#e377c2", "#9467bd"};
constexpr const char* kStepColour = "#d9d9d9";
constexpr const char* kSubmitColour = "#ff7f0e";
constexpr const char* kWaitColour = "#aec7e8";
constexpr double kWidth = 1200, kLeft = 140, kRight = 30;

std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

// A tick spacing of 1, 2 or 5 x 10^k giving at most about `ticks` ticks over [0, range].
double tickStep(double range, int ticks) {
    if (range <= 0) return 1;
    const double raw = range / ticks, power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * power >= raw) return m * power;
    return 10 * power;
}

std::string rect(double x, double y, double w, double h, const char* fill, const std::string& tip, const char* extra = "") {
    return fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"{}><title>{}</title></rect>\n",
                       x, y, std::max(w, 0.5), h, fill, extra, escape(tip));
}

std::string text(double x, double y, const std::string& s, const char* anchor = "start", int size = 12,
                 const char* weight = "normal") {
    return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"{}\" font-weight=\"{}\">{}</text>\n", x,
                       y, size, anchor, weight, escape(s));
}

// Ticks and grid lines for [0, range] ms drawn over [kLeft, kWidth - kRight].
std::string axis(double range, double top, double bottom) {
    std::string out;
    const double step = tickStep(range, 10), scale = (kWidth - kLeft - kRight) / range;
    for (double v = 0; v <= range * 1.0001; v += step) {
        const double x = kLeft + v * scale;
        out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e0e0e0\"/>\n", x, top, bottom);
        out += text(x, top - 6, fmt::format("{:g}", v), "middle", 11);
    }
    out += text(kWidth - kRight, top - 22, "ms", "end", 11);
    return out;
}

// Coloured squares with names, in rows from (x, y); returns the y below them.
double legend(std::string& out, double y, const std::vector<std::pair<std::string, const char*>>& items) {
    double x = kLeft;
    for (const auto& [name, colour] : items) {
        const double w = 30 + 7.0 * static_cast<double>(name.size());
        if (x + w > kWidth - kRight) {
            x = kLeft;
            y += 20;
        }
        out += rect(x, y, 12, 12, colour, name);
        out += text(x + 17, y + 11, name, "start", 12);
        x += w;
    }
    return y + 24;
}

std::vector<std::pair<std::string, const char*>> kindLegend(const graph::Graph& g) {
    std::array<bool, kColouredKinds> present{};
    for (const auto& op : g.ops) present[static_cast<size_t>(op.kind)] = true;
    std::vector<std::pair<std::string, const char*>> items;
    for (size_t k = 0; k < kColouredKinds; ++k)
        if (present[k]) items.emplace_back(graph::opKindName(static_cast<graph::OpKind>(k)), kKindColours[k]);
    return items;
}

std::string header(double height, const std::string& title) {
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
                       "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                       kWidth, height) +
           text(kLeft, 24, title, "start", 15, "bold");
}

// How long each drawn token lasts (ms from its call's start to the last thing it did).
std::vector<double> tokenLengths(const Timeline& t, size_t rows) {
    std::vector<double> lengths;
    for (size_t i = 0; i < rows; ++i) {
        const TokenRecord& token = t.tokens[i];
        int64_t end = std::max(token.stepEnd, token.hasDevice ? token.deviceEnd : token.stepEnd);
        for (size_t index : token.ops) end = std::max(end, t.events[index].endNs);
        lengths.push_back((end - token.stepBegin) * 1e-6);
    }
    return lengths;
}

// One scale for every row: the longest token, unless a few outliers (a cold first token)
// would squash the rest; those rows are cut at the edge and labelled with their length.
double timelineRange(std::vector<double> lengths) {
    std::sort(lengths.begin(), lengths.end());
    double range = lengths.empty() ? 1 : lengths.back();
    if (lengths.size() >= 4 && range > 1.5 * lengths[(lengths.size() - 1) * 3 / 4]) range = 1.25 * lengths[(lengths.size() - 1) * 3 / 4];
    return range > 0 ? range : 1;
}

// One token's row at height y: its host spans, a strip per layer, its ops.
class TokenRow {
public:
    TokenRow(const Timeline& t, const TokenRecord& token, double y, double scale)
        : t_(t), token_(token), y_(y), scale_(scale) {}

    std::string draw(std::vector<const Event*> host) const {
        std::string out;
        std::stable_partition(host.begin(), host.end(), [](const Event* e) { return e->kind == EventKind::Step; });
        for (const Event* e : host) {  // the call first, its submit and wait over it
            const bool step = e->kind == EventKind::Step;
            const char* colour = step ? kStepColour : e->kind == EventKind::Submit ? kSubmitColour : kWaitColour;
            out += rect(x(e->beginNs), y_ + (step ? 0 : 2), x(e->endNs) - x(e->beginNs), step ? 10 : 6, colour,
                        fmt::format("{}: {:.3f} ms", runtime::eventKindName(e->kind), (e->endNs - e->beginNs) * 1e-6));
        }
        return out + layers() + ops();
    }

private:
    double x(int64_t ns) const {
        return std::min(kLeft + static_cast<double>(ns - token_.stepBegin) * 1e-6 * scale_, kWidth - kRight);
    }

    std::string layers() const {
        std::map<int32_t, std::pair<int64_t, int64_t>> span;
        for (size_t index : token_.ops) {
            const Event& e = t_.events[index];
            if (e.layer < 0) continue;
            auto [it, fresh] = span.try_emplace(e.layer, e.beginNs, e.endNs);
            if (!fresh) it->second = {std::min(it->second.first, e.beginNs), std::max(it->second.second, e.endNs)};
        }
        std::string out;
        for (const auto& [layer, s] : span)
            out += rect(x(s.first), y_ + 33, x(s.second) - x(s.first), 3, layer % 2 ? "#404040" : "#b0b0b0",
                        fmt::format("layer {}: {:.3f} ms", layer, (s.second - s.first) * 1e-6));
        return out;
    }

    std::string ops() const {
        std::string out;
        for (size_t index : token_.ops) {
            const Event& e = t_.events[index];
            if (e.endNs <= e.beginNs) continue;  // fused: no span of its own
            const graph::Op& op = t_.graph->ops[static_cast<size_t>(e.op)];
            out += rect(x(e.beginNs), y_ + 14, x(e.endNs) - x(e.beginNs), 18, kKindColours[static_cast<size_t>(op.kind)],
                        fmt::format("{} ({}, layer {}): {:.1f} us", op.label, graph::opKindName(op.kind), op.layer,
                                    (e.endNs - e.beginNs) * 1e-3),
                        " stroke=\"white\" stroke-width=\"0.4\"");
        }
        return out;
    }

    const Timeline& t_;
    const TokenRecord& token_;
    double y_, scale_;
};

}  // namespace

std::string tokenTimelineSvg(const Timeline& t, const std::string& title, size_t maxTokens) {
    const size_t rows = std::min(t.tokens.size(), maxTokens);
    std::map<int32_t, std::vector<const Event*>> hostOf;  // step -> its host spans
    for (const Event& e : t.events)
        if (e.kind == EventKind::Step || e.kind == EventKind::Submit || e.kind == EventKind::Wait) hostOf[e.step].push_back(&e);
    const std::vector<double> lengths = tokenLengths(t, rows);
    const double rangeMs = timelineRange(lengths);
    const double top = 70, rowHeight = 38, scale = (kWidth - kLeft - kRight) / rangeMs;
    const double bottom = top + rowHeight * static_cast<double>(rows);
    std::string body = axis(rangeMs, top, bottom);
    for (size_t i = 0; i < rows; ++i) {
        const TokenRecord& token = t.tokens[i];
        const double y = top + rowHeight * static_cast<double>(i) + 4;
        body += text(kLeft - 8, y + 20, fmt::format("token {} (pos {})", i, token.position), "end", 11);
        body += TokenRow(t, token, y, scale).draw(hostOf[token.step]);
        if (lengths[i] > rangeMs)
            body += text(kWidth - kRight, y + 9, fmt::format("cut: {:.2f} ms long", lengths[i]), "end", 10, "bold");
    }
    std::string out;
    double y = bottom + 16;
    y = legend(out, y, {{"evaluate() call", kStepColour}, {"submit", kSubmitColour}, {"wait", kWaitColour},
                        {"layers (alternating)", "#404040"}});
    y = legend(out, y, kindLegend(*t.graph));
    if (rows < t.tokens.size()) {
        out += text(kLeft, y + 4, fmt::format("first {} of {} tokens shown", rows, t.tokens.size()), "start", 11);
        y += 20;
    }
    std::string svg = header(y + 10, title);
    svg += text(kLeft, 44, "time from the start of each evaluate() call: host spans above, ops below, layers under them",
                "start", 11);
    return svg + body + out + "</svg>\n";
}

std::string layerBarsSvg(const Summary& s, const std::string& title) {
    double rangeMs = 0;
    for (const LayerTime& l : s.byLayer) rangeMs = std::max(rangeMs, l.msPerToken);
    if (rangeMs <= 0) rangeMs = 1;
    rangeMs *= 1.15;  // room for the value labels
    const double top = 70, rowHeight = 24, scale = (kWidth - kLeft - kRight) / rangeMs;
    const double bottom = top + rowHeight * static_cast<double>(s.byLayer.size());
    std::string body = axis(rangeMs, top, bottom);
    for (size_t i = 0; i < s.byLayer.size(); ++i) {
        const LayerTime& l = s.byLayer[i];
        const double y = top + rowHeight * static_cast<double>(i) + 4;
        const std::string name = l.layer >= 0 ? fmt::format("layer {}", l.layer) : "outside layers";
        body += text(kLeft - 8, y + 13, name, "end", 12);
        double x = kLeft;
        for (size_t k = 0; k < l.msByKind.size() && k < kColouredKinds; ++k) {
            const double w = l.msByKind[k] * scale;
            if (l.msByKind[k] <= 0) continue;
            body += rect(x, y, w, 16, kKindColours[k],
                         fmt::format("{} {}: {:.3f} ms per token", name, graph::opKindName(static_cast<graph::OpKind>(k)), l.msByKind[k]));
            x += w;
        }
        body += text(x + 6, y + 13, fmt::format("{:.3f} ms", l.msPerToken), "start", 11);
    }
    std::string out;
    std::vector<std::pair<std::string, const char*>> kinds;
    for (size_t k = 0; k < kColouredKinds; ++k)
        for (const LayerTime& l : s.byLayer)
            if (k < l.msByKind.size() && l.msByKind[k] > 0) {
                kinds.emplace_back(graph::opKindName(static_cast<graph::OpKind>(k)), kKindColours[k]);
                break;
            }
    const double y = legend(out, bottom + 16, kinds);
    std::string svg = header(y + 10, title);
    svg += text(kLeft, 44, fmt::format("mean time per token by layer and op kind; {} tokens, {:.3f} ms per token", s.tokens, s.tokenMs),
                "start", 11);
    return svg + body + out + "</svg>\n";
}

}  // namespace zinc::trace
