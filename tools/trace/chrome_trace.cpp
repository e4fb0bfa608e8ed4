#include "tools/trace/chrome_trace.h"

#include <fmt/format.h>

namespace zinc::trace {
namespace {

using nlohmann::json;
using runtime::Event;
using runtime::EventKind;

json metadata(const char* what, int pid, int tid, const std::string& name, int sortIndex) {
    json m = {{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", what}, {"args", {{"name", name}}}};
    json sort = {{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"sort_index", sortIndex}}}};
    sort["name"] = std::string(what) == "process_name" ? "process_sort_index" : "thread_sort_index";
    return json::array({m, sort});
}

class Writer {
public:
    Writer(const Timeline& t) : t_(t) {}

    json build(const std::string& title) {
        names();
        for (size_t i = 0; i < t_.tokens.size(); ++i) tokenIndex_[t_.tokens[i].step] = static_cast<int32_t>(i);
        for (const Event& e : t_.events) event(e);
        counters();
        return {{"traceEvents", std::move(events_)},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"title", title}, {"tier", t_.tier}, {"device", t_.device},
                  {"device_clock_offset_ns", t_.deviceOffsetNs}, {"device_clock_consistent", t_.deviceClockConsistent}}}};
    }

private:
    double us(int64_t ns) const { return static_cast<double>(ns - t_.originNs) * 1e-3; }

    void push(json j) {
        if (j.is_array())
            for (auto& e : j) events_.push_back(std::move(e));
        else
            events_.push_back(std::move(j));
    }

    void names() {
        push(metadata("process_name", kHostPid, 0, "host", 1));
        push(metadata("thread_name", kHostPid, 1, "host", 1));
        push(metadata("process_name", kDevicePid, 0, fmt::format("device: {}", t_.tier), 2));
        for (size_t q = 0; q < std::max<size_t>(t_.queueNames.size(), 1); ++q)
            push(metadata("thread_name", kDevicePid, static_cast<int>(q) + 1,
                          q < t_.queueNames.size() ? t_.queueNames[q] : fmt::format("queue {}", q), static_cast<int>(q) + 1));
        push(metadata("process_name", kLayersPid, 0, "layers", 3));
        int32_t layers = 0;
        for (const auto& op : t_.graph->ops) layers = std::max(layers, op.layer + 1);
        for (int32_t l = 0; l < layers; ++l) push(metadata("thread_name", kLayersPid, l + 1, fmt::format("layer {}", l), l + 1));
        push(metadata("thread_name", kLayersPid, kOutsideLayersTid, "outside layers", kOutsideLayersTid));
    }

    json span(const std::string& name, const char* cat, int pid, int tid, const Event& e, json args) const {
        args["step"] = e.step;
        args["position"] = e.position;
        if (auto it = tokenIndex_.find(e.step); it != tokenIndex_.end()) args["token"] = it->second;
        return {{"name", name}, {"cat", cat}, {"ph", "X"}, {"pid", pid}, {"tid", tid},
                {"ts", us(e.beginNs)}, {"dur", static_cast<double>(e.endNs - e.beginNs) * 1e-3}, {"args", std::move(args)}};
    }

    void event(const Event& e) {
        switch (e.kind) {
            case EventKind::Step: {
                const std::string name = e.nTokens == 1 ? fmt::format("decode pos {}", e.position)
                                                        : fmt::format("prefill {} tokens at {}", e.nTokens, e.position);
                return push(span(name, "step", kHostPid, 1, e, {{"tokens", e.nTokens}}));
            }
            case EventKind::Submit: return push(span("submit", "host", kHostPid, 1, e, json::object()));
            case EventKind::Wait: return push(span("wait", "host", kHostPid, 1, e, json::object()));
            case EventKind::Device:
                return push(span(fmt::format("token at pos {}", e.position), "device", kDevicePid, e.queue + 1, e, json::object()));
            case EventKind::Op: return op(e);
        }
    }

    void op(const Event& e) {
        const graph::Op& op = t_.graph->ops[static_cast<size_t>(e.op)];
        json args = {{"op", e.op}, {"kind", graph::opKindName(op.kind)}, {"layer", op.layer}};
        if (e.fused) args["fused"] = true;
        if (!e.experts.empty()) args["experts"] = e.experts;
        push(span(op.label, "op", kDevicePid, e.queue + 1, e, args));
        push(span(op.label, "op", kLayersPid, op.layer >= 0 ? op.layer + 1 : kOutsideLayersTid, e, std::move(args)));
    }

    // Decode speed at each token's end: one over the time since the previous token's end.
    void counters() {
        for (size_t i = 0; i < t_.tokens.size(); ++i) {
            const TokenRecord& token = t_.tokens[i];
            const int64_t since = i > 0 && t_.tokens[i - 1].step + 1 == token.step ? token.stepEnd - t_.tokens[i - 1].stepEnd
                                                                                     : token.stepEnd - token.stepBegin;
            if (since <= 0) continue;
            push({{"name", "tok/s"}, {"ph", "C"}, {"pid", kHostPid}, {"tid", 1}, {"ts", us(token.stepEnd)},
                  {"args", {{"tok/s", 1e9 / static_cast<double>(since)}}}});
        }
    }

    const Timeline& t_;
    json events_ = json::array();
    std::map<int32_t, int32_t> tokenIndex_;  // step -> decode token index
};

}  // namespace

nlohmann::json chromeTrace(const Timeline& timeline, const std::string& title) { return Writer(timeline).build(title); }

}  // namespace zinc::trace
