#pragma once
// A tier's event log made readable: device timestamps moved onto the host clock (one offset
// for the whole trace, chosen so every token's device work lies inside its host submit..wait
// window), and the events of each decode token gathered. Everything in trace/ reads this.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "runtime/events.h"

namespace zinc::trace {

// One one-token evaluate() call and what it did. Times are host-clock nanoseconds.
struct TokenRecord {
    int32_t step = 0;
    int32_t position = 0;
    int64_t stepBegin = 0, stepEnd = 0;  // the evaluate() call
    int64_t submitNs = 0, waitNs = 0;    // host time submitting and waiting (GPU tiers)
    int32_t submissions = 0;
    bool hasDevice = false;              // the tier reported the submission's device span
    int64_t deviceBegin = 0, deviceEnd = 0;
    std::vector<size_t> ops;             // indices into Timeline::events, in graph order
    // The token's time: the device span where there is one, else the evaluate() call.
    int64_t tokenNs() const { return hasDevice ? deviceEnd - deviceBegin : stepEnd - stepBegin; }
    int64_t tokenBegin() const { return hasDevice ? deviceBegin : stepBegin; }
};

struct Timeline {
    const graph::Graph* graph = nullptr;
    std::string tier, device;
    std::vector<std::string> queueNames;
    std::vector<runtime::Event> events;  // every event, device times already on the host clock
    int64_t deviceOffsetNs = 0;          // what was added to device-clock times
    bool deviceClockConsistent = true;   // one offset fit every token's host window
    int64_t originNs = 0;                // the earliest event: time 0 of the trace
    std::vector<TokenRecord> tokens;     // decode steps, in order
    int32_t steps = 0;                   // evaluate() calls, prefill included
};

// Throws std::runtime_error when the log's op events do not name ops of `graph`.
Timeline buildTimeline(const runtime::EventLog& log, const graph::Graph& graph);

}  // namespace zinc::trace
