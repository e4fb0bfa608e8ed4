#pragma once
// The bring-up ladder (DESIGN.md "probe rungs", kfdtest's order): each rung proves one more
// piece of the path from host to command processor, and a failed rung reports the state that
// explains it. `zinc-rt probe` prints these; the tests climb the same ladder on the simulated GPU.
//
// Opening the device is the caller's rung ("device found", "VM acquired": openLinuxDevice does
// GET_VERSION and ACQUIRE_VM, and its error says what was looked for). climbLadder starts from
// an open device and stops at the first rung that fails; the rest are reported as skipped.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kfd/device/device.h"

namespace zinc::kfd {

struct Rung {
    std::string name;     // "NOP retired", "fence retired", ...
    bool ok = false;
    bool skipped = false;  // not tried: an earlier rung failed
    double ms = 0;
    std::string detail;   // what was checked, or on failure the error with the queue state
};

struct LadderOptions {
    uint32_t timeoutMs = 10000;  // for each rung's wait
    // The code object for "trivial dispatch"; null: the one embedded for the device's gfx target.
    std::shared_ptr<const kernels::CodeObject> code{};
    bool dispatch = true;        // climb the dispatch rung
};

std::vector<Rung> climbLadder(Device& device, const LadderOptions& options = {});

// One line per rung: "ok   12.3 ms  fence retired: ..." / "FAIL ..." / "skip ...".
std::string formatLadder(const std::vector<Rung>& rungs);

}  // namespace zinc::kfd
