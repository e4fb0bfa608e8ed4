#pragma once
// The simulated amdgpu node the umq tests share: one PoCL runner for the binary (building the
// kernel program is the slow part), a driver per test so its ioctl log starts empty.
#include <memory>

#include "kernels/pocl_runner.h"
#include "umq/drm_device.h"
#include "umq/sim_amdgpu.h"

namespace zinc::umq::testing {

inline std::shared_ptr<kernels::PoclRunner> sharedRunner() {
    static auto runner = std::make_shared<kernels::PoclRunner>();
    return runner;
}

// The driver and the device opened over it (the device first to go).
struct SimNode {
    std::shared_ptr<SimAmdgpu> driver;
    std::unique_ptr<DrmDevice> device;
};

inline SimNode openNode(const std::string& gfx = "gfx1100", bool pocl = false, bool userQueues = true) {
    SimAmdgpuOptions o;
    o.pocl = pocl;
    o.userQueues = userQueues;
    if (pocl) o.runner = sharedRunner();
    auto driver = makeSimAmdgpu(gfx, o);
    if (!driver) throw std::runtime_error(driver.error().describe());
    DrmOptions d;
    d.renderPath = o.renderPath;
    d.label = "simulated ";
    d.syscalls = driver->get();
    auto device = openDrmDevice(d);
    if (!device) throw std::runtime_error(device.error().describe());
    return {*driver, std::move(*device)};
}

}  // namespace zinc::umq::testing
