#pragma once
// Events: where a tier's time goes, token by token and op by op. A tier given an EventLog
// (Tier::setEventLog) records, for every evaluate() call (a "step"), host spans (the call,
// the submission, the wait) and, for decode steps (one token), one Op event per op of the
// graph with its begin and end on the tier's own clock: a steady clock on the cpu tier,
// timestamp queries on vulkan, RELEASE_MEM GPU-clock stamps on the PM4 tiers. Without a log
// a tier records nothing (one null-pointer check per step or op).
//
// For a new tier (umq): implement Tier::setEventLog, tag Op events with the graph op index,
// and add the tier to tests/trace (trace_tiers.h); the PM4 stamping of kfd/tier/plan_instrument.h
// is written against PlanBuilder and works for any tier that records the same IB.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace zinc::runtime {

enum class EventKind : uint8_t {
    Step,    // host: one evaluate() call, begin to end
    Submit,  // host: preparing and submitting the step's work (GPU tiers)
    Wait,    // host: waiting for the device to finish the step (GPU tiers)
    Device,  // device: the step's whole submission on the device clock (GPU tiers)
    Op,      // one op of the graph (decode steps): device clock on GPU tiers, host clock on cpu
};
inline const char* eventKindName(EventKind kind) {
    switch (kind) {
        case EventKind::Step: return "step";
        case EventKind::Submit: return "submit";
        case EventKind::Wait: return "wait";
        case EventKind::Device: return "device";
        case EventKind::Op: return "op";
    }
    return "?";
}

enum class EventClock : uint8_t { Host, Device };

struct Event {
    EventKind kind = EventKind::Op;
    EventClock clock = EventClock::Host;
    int32_t step = 0;      // evaluate() call, counted from 0 by the log
    int32_t position = 0;  // KV position of the step's first token
    int32_t nTokens = 1;   // tokens in the step (1 = decode)
    int32_t op = -1;       // Op: index in graph.ops
    int32_t layer = -1;    // Op: graph.ops[op].layer (-1 outside the layer stack)
    int32_t queue = 0;     // device queue the work ran on (EventLog::queueNames)
    bool fused = false;    // Op: no work of its own; a neighbouring op's dispatch did it (zero span)
    std::vector<int32_t> experts;  // MoE ops: the experts routed for the step's last token
    int64_t beginNs = 0, endNs = 0;
};

class EventLog {
public:
    // The host clock of every Host event: steady_clock in nanoseconds.
    static int64_t hostNs() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    // A tier calls this first in every evaluate(); later events are tagged with the step.
    int32_t beginStep(int32_t position, int32_t nTokens) {
        current_ = Event{};
        current_.step = nextStep_++;
        current_.position = position;
        current_.nTokens = nTokens;
        return current_.step;
    }
    // An event of the current step (its step, position and nTokens are filled in).
    void add(Event e) {
        e.step = current_.step;
        e.position = current_.position;
        e.nTokens = current_.nTokens;
        events_.push_back(std::move(e));
    }
    void addHost(EventKind kind, int64_t beginNs, int64_t endNs) {
        Event e;
        e.kind = kind;
        e.beginNs = beginNs;
        e.endNs = endNs;
        add(std::move(e));
    }
    // Host spans of a GPU tier's step: the call [begin, end], its submission [begin,
    // submitted] and its wait [submitted, waited].
    void addHostStep(int64_t beginNs, int64_t submittedNs, int64_t waitedNs, int64_t endNs) {
        addHost(EventKind::Submit, beginNs, submittedNs);
        addHost(EventKind::Wait, submittedNs, waitedNs);
        addHost(EventKind::Step, beginNs, endNs);
    }

    const std::vector<Event>& events() const { return events_; }
    int32_t steps() const { return nextStep_; }
    void clear() {
        events_.clear();
        nextStep_ = 0;
    }

    // Filled by the tier when it is given the log: what its tracks are.
    std::string tier;                     // "cpu", "vulkan", "kfd"
    std::string device;                   // describe() of the tier
    std::vector<std::string> queueNames;  // Event::queue -> name ("cpu threads", "vulkan queue 0")

private:
    std::vector<Event> events_;
    Event current_;
    int32_t nextStep_ = 0;
};

}  // namespace zinc::runtime
