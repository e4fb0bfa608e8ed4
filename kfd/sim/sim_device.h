#pragma once
// The simulated GPU behind kfd::Device. Selected explicitly (`--sim`): opening the Linux device
// never falls back to it.
#include <memory>
#include <optional>
#include <string_view>

#include "kfd/device/device.h"
#include "kfd/sim/sim_dispatch.h"

namespace zinc::kernels {
class PoclRunner;
}

namespace zinc::kfd {

struct SimOptions {
    // How dispatches execute: the kernels' machine code in the ISA interpreter, or their OpenCL C
    // source on PoCL's CPU device (the GPU's memory then allocated as PoCL fine-grained SVM so
    // kernel pointers are GPU addresses). Unset: simExecFromEnvironment().
    std::optional<SimExec> exec{};
    // Execute dispatches at all. false: the simulated GPU runs every other packet and refuses
    // dispatches (tests of the queue machinery alone). (The name is from when PoCL was the only way.)
    bool pocl = true;
    // A runner to share (PoCL builds the kernel program once per runner, which takes seconds);
    // null: the device makes its own when `pocl` is set.
    std::shared_ptr<kernels::PoclRunner> runner{};
    // The KFD topology node this GPU pretends to be (`--device` among `--sim-nodes`); 0 leaves
    // caps().nodeIndex at 0 as for a single simulated GPU.
    uint32_t nodeIndex = 0;
    // A small BAR (`--sim-bar-mib`, tests): only this much VRAM may be CPU-visible; a VRAM
    // allocation asking for CPU access beyond it fails as KFD's would, and VRAM allocated
    // without CPU access (AllocOptions::hostAccess false) has no CPU pointer. 0: all of VRAM.
    uint64_t cpuVisibleVramBytes = 0;
};

// A simulated GPU of the named gfx target ("gfx1100", "gfx1201"). Fails for targets it does not
// model and, with options.pocl, when PoCL's CPU device cannot be opened.
Result<std::unique_ptr<Device>> openSimulatedDevice(std::string_view gfxName, const SimOptions& options = {});

}  // namespace zinc::kfd
