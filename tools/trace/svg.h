#pragma once
// Pictures of a trace as SVG, written directly (no library): the per-token timeline (one row
// per decode token: the host's call, submit and wait above, the ops on the device below,
// coloured by op kind over alternating layer bands) and a per-layer bar chart (mean time per
// token, stacked by op kind). Every shape carries a <title> tooltip.
#include <cstddef>
#include <string>

#include "tools/trace/summary.h"
#include "tools/trace/timeline.h"

namespace zinc::trace {

std::string tokenTimelineSvg(const Timeline& timeline, const std::string& title, size_t maxTokens = 24);
std::string layerBarsSvg(const Summary& summary, const std::string& title);

}  // namespace zinc::trace
