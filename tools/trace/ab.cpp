#include "tools/trace/ab.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "runtime/capture.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tools/trace/npy.h"

namespace zinc::trace {
namespace {

struct Generated {
    std::vector<int32_t> argmax;              // each step's argmax
    std::vector<std::vector<float>> logits;   // each step's logits
    double decodeTokPerSec = 0;
};

// The prompt, then n - 1 decode steps fed `forced` (B: A's tokens), or each step's own argmax
// when `forced` is empty (A: greedy). Argmax on the host for both sides alike.
Generated generate(const AbSide& side, const std::vector<int32_t>& prompt, int32_t n, const std::vector<int32_t>& forced) {
    runtime::Session session(*side.graph->config, *side.tier);
    session.feed(prompt);
    Generated g;
    for (int32_t i = 0; i < n; ++i) {
        const auto logits = session.logits();
        g.logits.emplace_back(logits.begin(), logits.end());
        g.argmax.push_back(runtime::argmax(logits));
        if (i + 1 < n) session.step(forced.empty() ? g.argmax.back() : forced[size_t(i)]);
    }
    g.decodeTokPerSec = session.stats().decodeTokensPerSecond();
    return g;
}

// Both sides' choices at a step are within `tolerance` of each other on either side's logits:
// a near tie that rounding may flip (the goldens' rule: top-1 is checked only past a 0.05 gap).
bool nearTie(const std::vector<float>& a, const std::vector<float>& b, int32_t ta, int32_t tb, double tolerance) {
    const auto ia = size_t(ta), ib = size_t(tb);
    return double(a[ia]) - double(a[ib]) <= tolerance || double(b[ib]) - double(b[ia]) <= tolerance;
}

// Feeds sequence[0, position) batched, then sequence[position] as one captured decode step.
std::vector<float> capturedStep(const AbSide& side, const std::vector<int32_t>& sequence, int32_t position,
                                runtime::Capture& capture) {
    runtime::Session session(*side.graph->config, *side.tier);
    if (position > 0) session.feed(std::span<const int32_t>(sequence.data(), static_cast<size_t>(position)));
    runtime::CaptureScope scope(*side.tier, capture);
    const auto logits = session.step(sequence[static_cast<size_t>(position)]);
    if (capture.steps != 1) throw std::runtime_error(fmt::format("ab: {} tier captured {} steps, 1 expected", side.label, capture.steps));
    return {logits.begin(), logits.end()};
}

LayerDiff compare(std::span<const float> a, std::span<const float> b) {
    LayerDiff d;
    double dot = 0, na = 0, nb = 0, maxA = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        d.maxAbs = std::max(d.maxAbs, std::fabs(double(a[i]) - double(b[i])));
        maxA = std::max(maxA, std::fabs(double(a[i])));
        dot += double(a[i]) * b[i];
        na += double(a[i]) * a[i];
        nb += double(b[i]) * b[i];
    }
    if (a.size() != b.size()) d.maxAbs = INFINITY;
    d.relative = maxA > 0 ? d.maxAbs / maxA : d.maxAbs;
    d.cosine = na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : (na == nb ? 1.0 : 0.0);
    return d;
}

double topGap(std::span<const float> logits) {
    float first = -INFINITY, second = -INFINITY;
    for (float v : logits) {
        if (v > first) {
            second = first;
            first = v;
        } else if (v > second) {
            second = v;
        }
    }
    return double(first) - double(second);
}

void checkSameShape(const graph::Graph& a, const graph::Graph& b) {
    if (a.ops.size() != b.ops.size() || a.config->nLayer != b.config->nLayer || a.config->nEmbd != b.config->nEmbd ||
        a.config->nVocab != b.config->nVocab)
        throw std::runtime_error(fmt::format("ab: the two sides run different graphs ({} ops, {} layers, vocab {} against {}, {}, {})",
                                             a.ops.size(), a.config->nLayer, a.config->nVocab, b.ops.size(), b.config->nLayer,
                                             b.config->nVocab));
}

// Every op output both sides captured, as <dir>/a/NAME.npy and <dir>/b/NAME.npy, and
// <dir>/index.json naming each with its op, layer and differences.
std::vector<std::string> dump(const std::string& dir, const AbReport& r, const graph::Graph& g, const runtime::Capture& a,
                              const runtime::Capture& b) {
    namespace fs = std::filesystem;
    fs::create_directories(fs::path(dir) / "a");
    fs::create_directories(fs::path(dir) / "b");
    nlohmann::json tensors = nlohmann::json::array();
    std::vector<std::string> written;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const graph::Op& op = g.ops[i];
        const std::string name = runtime::tensorName(op);
        nlohmann::json entry = {{"name", name}, {"op", i}, {"layer", op.layer}, {"kind", graph::opKindName(op.kind)}};
        for (const auto& [side, capture] : {std::pair{"a", &a}, std::pair{"b", &b}}) {
            const auto& values = capture->at(i);
            if (values.empty()) {
                entry[side] = nullptr;  // that tier never materialises it (fused away)
                continue;
            }
            const std::string file = std::string(side) + "/" + name + ".npy";
            writeNpy((fs::path(dir) / file).string(), values);
            entry[side] = file;
            entry["shape"] = {values.size()};
        }
        if (!a.at(i).empty() && !b.at(i).empty()) {
            const LayerDiff d = compare(a.at(i), b.at(i));
            entry["max_abs"] = d.maxAbs;
            entry["relative"] = d.relative;
            entry["cosine"] = d.cosine;
            written.push_back(name);
        }
        tensors.push_back(std::move(entry));
    }
    const nlohmann::json index = {{"a", r.labelA}, {"b", r.labelB}, {"position", r.comparedPosition},
                                  {"token", r.comparedToken}, {"tensors", std::move(tensors)}};
    std::ofstream out(fs::path(dir) / "index.json");
    out << index.dump(2) << "\n";
    if (!out) throw std::runtime_error(fmt::format("ab: cannot write {}/index.json", dir));
    return written;
}

}  // namespace

AbReport runAb(const AbSide& a, const AbSide& b, const AbOptions& o) {
    if (o.prompt.empty()) throw std::runtime_error("ab: the prompt has no tokens");
    if (o.tokens < 1) throw std::runtime_error("ab: at least one token must be generated");
    checkSameShape(*a.graph, *b.graph);
    AbReport r;
    r.labelA = a.label;
    r.labelB = b.label;
    r.prompt = o.prompt;
    r.layerTolerance = o.layerTolerance;
    r.tieTolerance = o.tieTolerance;
    const Generated ga = generate(a, o.prompt, o.tokens, {});
    const Generated gb = generate(b, o.prompt, o.tokens, ga.argmax);
    r.tokensA = ga.argmax;
    r.tokensB = gb.argmax;
    r.decodeTokPerSecA = ga.decodeTokPerSec;
    r.decodeTokPerSecB = gb.decodeTokPerSec;
    r.speedRatio = ga.decodeTokPerSec > 0 ? gb.decodeTokPerSec / ga.decodeTokPerSec : 0;
    for (int32_t i = 0; i < o.tokens; ++i) {
        const auto k = size_t(i);
        if (r.tokensA[k] == r.tokensB[k]) {
            ++r.agreed;
        } else if (nearTie(ga.logits[k], gb.logits[k], r.tokensA[k], r.tokensB[k], o.tieTolerance)) {
            r.nearTies.push_back(i);
        } else if (r.firstDivergence < 0) {
            r.firstDivergence = i;
        }
    }

    // The step that produced the first differing token (or the last token): both sides saw
    // the same tokens up to it.
    const int32_t produced = r.firstDivergence >= 0 ? r.firstDivergence : o.tokens - 1;
    std::vector<int32_t> sequence = o.prompt;
    sequence.insert(sequence.end(), r.tokensA.begin(), r.tokensA.begin() + produced);
    r.comparedPosition = static_cast<int32_t>(sequence.size()) - 1;
    r.comparedToken = sequence.back();
    const bool validate = !o.validateDir.empty();
    runtime::Capture ca = validate ? runtime::Capture::everyOp(*a.graph) : runtime::Capture::residuals(*a.graph);
    runtime::Capture cb = validate ? runtime::Capture::everyOp(*b.graph) : runtime::Capture::residuals(*b.graph);
    const auto logitsA = capturedStep(a, sequence, r.comparedPosition, ca);
    const auto logitsB = capturedStep(b, sequence, r.comparedPosition, cb);
    r.logitsMaxAbs = compare(logitsA, logitsB).maxAbs;
    r.top2GapA = topGap(logitsA);
    r.top2GapB = topGap(logitsB);
    const auto ends = runtime::layerEndOps(*a.graph);
    for (size_t l = 0; l < ends.size(); ++l) {
        const auto &ra = ca.at(ends[l]), &rb = cb.at(ends[l]);
        if (ra.empty() || rb.empty())
            throw std::runtime_error(fmt::format("ab: the {} tier did not capture the residual after layer {}",
                                                 ra.empty() ? a.label : b.label, l));
        LayerDiff d = compare(ra, rb);
        d.layer = static_cast<int32_t>(l);
        if (r.firstDivergingLayer < 0 && !(d.relative <= o.layerTolerance)) r.firstDivergingLayer = d.layer;
        r.layers.push_back(d);
    }
    if (validate) r.dumped = dump(o.validateDir, r, *a.graph, ca, cb);
    return r;
}

std::string formatAb(const AbReport& r) {
    const auto n = static_cast<int32_t>(r.tokensA.size());
    std::string out = fmt::format("ab: A = {}, B = {}; prompt {} tokens, {} steps (A greedy, B fed A's tokens)\n", r.labelA,
                                  r.labelB, r.prompt.size(), n);
    out += fmt::format("A tokens: {}\nB argmax: {}\n", fmt::join(r.tokensA, " "), fmt::join(r.tokensB, " "));
    out += fmt::format("token agreement: {}/{}", r.agreed, n);
    if (!r.nearTies.empty())
        out += fmt::format("; near ties (gap <= {:g}) at step {}", r.tieTolerance, fmt::join(r.nearTies, ", "));
    if (r.firstDivergence < 0)
        out += r.nearTies.empty() ? " (full)\n" : "; no divergence past a near tie\n";
    else
        out += fmt::format("; first diverging token at step {} (position {}): A {} B {}\n", r.firstDivergence,
                           r.comparedPosition + 1, r.tokensA[size_t(r.firstDivergence)], r.tokensB[size_t(r.firstDivergence)]);
    out += fmt::format("residual after each layer at position {} (token {}{}):\n", r.comparedPosition, r.comparedToken,
                       r.firstDivergence < 0 ? ", the last step" : ", the step that diverged");
    out += "  layer      max |a-b|    relative     cosine\n";
    for (const LayerDiff& d : r.layers)
        out += fmt::format("  {:>5}  {:>12.4g}  {:>10.3g}  {:>10.7f}{}\n", d.layer, d.maxAbs, d.relative, d.cosine,
                           d.layer == r.firstDivergingLayer ? "   <- first over the tolerance" : "");
    if (r.firstDivergingLayer < 0)
        out += fmt::format("first diverging layer: none (every layer within {:g} relative)\n", r.layerTolerance);
    else
        out += fmt::format("first diverging layer: {} (tolerance {:g} relative)\n", r.firstDivergingLayer, r.layerTolerance);
    out += fmt::format("logits there: max |a-b| {:.4g}; top-1 minus top-2: A {:.4g}, B {:.4g}\n", r.logitsMaxAbs, r.top2GapA,
                       r.top2GapB);
    out += fmt::format("decode: A {:.1f} tok/s, B {:.1f} tok/s, speed ratio B/A {:.3f}\n", r.decodeTokPerSecA, r.decodeTokPerSecB,
                       r.speedRatio);
    if (!r.dumped.empty()) out += fmt::format("validate: {} tensors dumped from both sides\n", r.dumped.size());
    return out;
}

nlohmann::json abJson(const AbReport& r) {
    nlohmann::json layers = nlohmann::json::array();
    for (const LayerDiff& d : r.layers)
        layers.push_back({{"layer", d.layer}, {"max_abs", d.maxAbs}, {"relative", d.relative}, {"cosine", d.cosine}});
    return {{"a", r.labelA},
            {"b", r.labelB},
            {"prompt", r.prompt},
            {"tokens_a", r.tokensA},
            {"tokens_b", r.tokensB},
            {"agreed", r.agreed},
            {"near_ties", r.nearTies},
            {"tie_tolerance", r.tieTolerance},
            {"full_agreement", r.firstDivergence < 0 && r.nearTies.empty()},
            {"diverged", r.firstDivergence >= 0},
            {"first_diverging_token", r.firstDivergence},
            {"compared_position", r.comparedPosition},
            {"compared_token", r.comparedToken},
            {"layers", std::move(layers)},
            {"first_diverging_layer", r.firstDivergingLayer},
            {"layer_tolerance", r.layerTolerance},
            {"logits_max_abs", r.logitsMaxAbs},
            {"top2_gap_a", r.top2GapA},
            {"top2_gap_b", r.top2GapB},
            {"decode_tok_s_a", r.decodeTokPerSecA},
            {"decode_tok_s_b", r.decodeTokPerSecB},
            {"speed_ratio", r.speedRatio},
            {"dumped", r.dumped}};
}

}  // namespace zinc::trace
