#pragma once
// A Vulkan device opened alone (no model), for tests that dispatch one kernel off any plan:
// its queue, pipelines and host-visible buffers.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "vulkan/recorder.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_device.h"
#include "vulkan/vk_pipeline.h"
#include "vulkan/vk_queue.h"

namespace zinc::test {

// Device 0 opened with ZINC_VK_COOPMAT=mode (read once, by vk::Device; nullptr: as set).
struct Gpu {
    explicit Gpu(const char* mode) : device(open(mode)), queue(*device), pipelines(*device) {}
    static std::unique_ptr<vk::Device> open(const char* mode) {
        if (mode) ::setenv("ZINC_VK_COOPMAT", mode, 1);
        auto d = std::make_unique<vk::Device>(vk::Instance::shared(), 0);
        if (mode) ::unsetenv("ZINC_VK_COOPMAT");
        return d;
    }
    vk::DeviceBuffer buffer(size_t bytes, const void* data = nullptr) {
        vk::DeviceBuffer b(*device, bytes, vk::MemoryKind::HostVisible, "test buffer");
        if (data) std::memcpy(b.mapped(), data, bytes);
        else std::memset(b.mapped(), 0, bytes);
        return b;
    }
    // Records `fill` into one command buffer, submits it and waits, the writes visible to the host.
    template <typename Fill>
    void run(Fill&& fill, const char* what = "kernel test") {
        queue.runOnce(
            [&](VkCommandBuffer cmd) {
                vk::Recorder rec(cmd, pipelines.layout());
                fill(rec);
                rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                            VK_ACCESS_HOST_READ_BIT);
            },
            std::chrono::seconds(600), what);
    }
    std::unique_ptr<vk::Device> device;
    vk::Queue queue;
    vk::PipelineFactory pipelines;
};

}  // namespace zinc::test
