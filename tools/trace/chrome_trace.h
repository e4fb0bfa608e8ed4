#pragma once
// A timeline in the Chrome trace event format (the JSON object form with "traceEvents"),
// which chrome://tracing and ui.perfetto.dev open. Processes and threads are the tracks:
//   pid 1 "host"    tid 1: evaluate() calls ("X", cat "step"), their submit and wait spans
//                   ("X", cat "host") and a "tok/s" counter ("C");
//   pid 2 "device"  one thread per queue: the device span of each token (cat "device") and
//                   every op of every decode token (cat "op");
//   pid 3 "layers"  one thread per layer ("layer 0"..) and one for the ops outside the layer
//                   stack ("outside layers"): the same op spans, by layer.
// Times are microseconds from the first event; device times are on the host clock
// (Timeline::deviceOffsetNs says by how much they were moved).
#include <nlohmann/json.hpp>

#include <string>

#include "tools/trace/timeline.h"

namespace zinc::trace {

inline constexpr int kHostPid = 1, kDevicePid = 2, kLayersPid = 3;
inline constexpr int kOutsideLayersTid = 100000;

nlohmann::json chromeTrace(const Timeline& timeline, const std::string& title);

}  // namespace zinc::trace
