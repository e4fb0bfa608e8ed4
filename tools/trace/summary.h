#pragma once
// What a trace says, as numbers: time per op kind and per layer, host against device time per
// token, submissions per token, idle gaps between tokens. Means over the decode tokens.
#include <cstdint>
#include <string>
#include <vector>

#include "tools/trace/timeline.h"

namespace zinc::trace {

struct KindTime {
    std::string kind;  // graph::opKindName
    double msPerToken = 0;
    int32_t opsPerToken = 0;  // graph ops of this kind (fused ones included)
};

struct LayerTime {
    int32_t layer = -1;  // -1: the ops outside the layer stack (embed, output norm, lm_head)
    double msPerToken = 0;
    std::vector<double> msByKind;  // per graph::OpKind, indexed by its value
};

struct Summary {
    std::string tier, device;
    int32_t tokens = 0;           // decode tokens traced
    int32_t opEventsPerToken = 0;
    double tokenMs = 0;     // per token: the device span on GPU tiers, the evaluate() call on cpu
    double stepMs = 0;      // per token: the evaluate() call (host wall time)
    double hostMs = 0;      // per token: the host's own time in the call (call minus wait)
    double deviceMs = 0;    // per token: the device span (0 without one)
    double waitMs = 0;      // per token: host time waiting for the device
    double opsMs = 0;       // per token: the op spans added up
    double layersMs = 0;    // per token: the layers' op spans added up (LayerTime, layer >= 0)
    double outsideMs = 0;   // per token: ops outside the layer stack
    // Per token, the token's time that no op span covers: before the first op begins (the
    // host's work ahead of the graph on cpu; 0 on GPU tiers, whose first op opens the device
    // span) and after the last op ends (the logits copy or the sampled token, the host's work
    // after the graph). Op spans tile, so ops + before + after = the token's time.
    double beforeOpsMs = 0;
    double afterOpsMs = 0;
    double submissionsPerToken = 0;
    double hostGapMs = 0;    // mean idle between one token's evaluate() and the next
    double deviceGapMs = 0;  // mean idle on the device between one token's work and the next
    double tokensPerSecond = 0;  // tokens / (last call's end - first call's begin)
    std::vector<KindTime> byKind;    // largest first
    std::vector<LayerTime> byLayer;  // layer 0.., then the outside ops (layer -1)
    bool hasDevice = false;
};

Summary summarize(const Timeline& timeline);
// The summary as text, for a terminal.
std::string formatSummary(const Summary& summary);

}  // namespace zinc::trace
