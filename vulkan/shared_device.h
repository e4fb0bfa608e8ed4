#pragma once
// The process's logical devices: one a physical device (and DeviceOptions), with its pipelines,
// made by the first tier that asks and kept for every later one. A pipeline is the driver's
// compile of a shader (on lavapipe SPIR-V -> NIR -> LLVM, 0.05-0.5 s each); tiers made one
// after another in one process — a model reloaded by serve, the vulkan test suite's hundreds
// (3,835 pipelines asked for, 205 distinct) — compile each once instead of once a tier.
// Like Instance::shared, never destroyed: at exit NVIDIA's driver is gone before static
// destructors run. A device marked lost (Device::markLost) is replaced for the next tier.
#include <cstdint>
#include <memory>

#include "vulkan/vk_device.h"
#include "vulkan/vk_pipeline.h"

namespace zinc::vk {

class SharedDevice {
public:
    // Device `index` under the options the environment gives now (DeviceOptions::fromEnvironment).
    static std::shared_ptr<SharedDevice> get(int32_t index);

    SharedDevice(int32_t index, const DeviceOptions& options);
    SharedDevice(const SharedDevice&) = delete;
    SharedDevice& operator=(const SharedDevice&) = delete;

    const Device& device() const { return device_; }
    PipelineFactory& pipelines() { return pipelines_; }

private:
    Device device_;
    PipelineFactory pipelines_;  // after device_: destroyed first
};

}  // namespace zinc::vk
