#include "tools/trace/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace zinc::trace {
namespace {

using runtime::Event;
using runtime::EventClock;
using runtime::EventKind;

// Host windows and device spans of the steps that have both.
struct Window {
    int64_t submitBegin = 0, submitEnd = 0, waitEnd = 0;
    int64_t deviceBegin = 0, deviceEnd = 0;
    bool host = false, device = false;
};

// The offset that puts device time on the host clock. The device began a step's work after
// the host began submitting it and finished before the host's wait returned, so any offset in
// [max(submitBegin - deviceBegin), min(waitEnd - deviceEnd)] is consistent with every step;
// within that range the one closest to "the device starts when the submit call returns" is
// taken. Clocks that drift apart leave no such range: then that guess alone (median).
int64_t deviceOffset(const std::vector<Event>& events, bool& consistent) {
    std::map<int32_t, Window> windows;
    for (const Event& e : events) {
        Window& w = windows[e.step];
        if (e.kind == EventKind::Submit) {
            w.submitBegin = e.beginNs;
            w.submitEnd = e.endNs;
            w.host = true;
        } else if (e.kind == EventKind::Wait) {
            w.waitEnd = e.endNs;
        } else if (e.kind == EventKind::Device) {
            w.deviceBegin = e.beginNs;
            w.deviceEnd = e.endNs;
            w.device = true;
        }
    }
    int64_t lower = std::numeric_limits<int64_t>::min(), upper = std::numeric_limits<int64_t>::max();
    std::vector<int64_t> guesses;
    for (const auto& [step, w] : windows) {
        if (!w.host || !w.device) continue;
        lower = std::max(lower, w.submitBegin - w.deviceBegin);
        upper = std::min(upper, w.waitEnd - w.deviceEnd);
        guesses.push_back(w.submitEnd - w.deviceBegin);
    }
    consistent = true;
    if (guesses.empty()) return 0;
    std::nth_element(guesses.begin(), guesses.begin() + static_cast<std::ptrdiff_t>(guesses.size() / 2), guesses.end());
    const int64_t guess = guesses[guesses.size() / 2];
    if (lower > upper) {
        consistent = false;
        return guess;
    }
    return std::clamp(guess, lower, upper);
}

void addToToken(TokenRecord& t, const Event& e, size_t index) {
    switch (e.kind) {
        case EventKind::Step:
            t.stepBegin = e.beginNs;
            t.stepEnd = e.endNs;
            break;
        case EventKind::Submit:
            t.submitNs += e.endNs - e.beginNs;
            ++t.submissions;
            break;
        case EventKind::Wait: t.waitNs += e.endNs - e.beginNs; break;
        case EventKind::Device:
            t.hasDevice = true;
            t.deviceBegin = e.beginNs;
            t.deviceEnd = e.endNs;
            break;
        case EventKind::Op: t.ops.push_back(index); break;
    }
}

}  // namespace

Timeline buildTimeline(const runtime::EventLog& log, const graph::Graph& graph) {
    Timeline t;
    t.graph = &graph;
    t.tier = log.tier;
    t.device = log.device;
    t.queueNames = log.queueNames;
    t.events = log.events();
    t.steps = log.steps();
    for (const Event& e : t.events)
        if (e.kind == EventKind::Op && (e.op < 0 || static_cast<size_t>(e.op) >= graph.ops.size()))
            throw std::runtime_error(fmt::format("trace: an op event names op {}, the graph has {} ops", e.op, graph.ops.size()));
    t.deviceOffsetNs = deviceOffset(t.events, t.deviceClockConsistent);
    t.originNs = std::numeric_limits<int64_t>::max();
    for (Event& e : t.events) {
        if (e.clock == EventClock::Device) {
            e.beginNs += t.deviceOffsetNs;
            e.endNs += t.deviceOffsetNs;
            e.clock = EventClock::Host;
        }
        t.originNs = std::min(t.originNs, e.beginNs);
    }
    if (t.events.empty()) t.originNs = 0;
    std::map<int32_t, TokenRecord> decode;
    for (size_t i = 0; i < t.events.size(); ++i) {
        const Event& e = t.events[i];
        if (e.nTokens != 1) continue;
        TokenRecord& token = decode[e.step];
        token.step = e.step;
        token.position = e.position;
        addToToken(token, e, i);
    }
    for (auto& [step, token] : decode) {
        std::sort(token.ops.begin(), token.ops.end(),
                  [&](size_t a, size_t b) { return t.events[a].op < t.events[b].op; });
        t.tokens.push_back(std::move(token));
    }
    return t;
}

}  // namespace zinc::trace
