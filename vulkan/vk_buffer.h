#pragma once
// A buffer with its own memory, reached by shaders through its device address.
#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "vulkan/vk_device.h"

namespace zinc::vk {

enum class MemoryKind {
    DeviceLocal,  // weights, arena, KV cache
    HostVisible,  // token state, logits read back, staging: mapped, coherent
};

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const Device& device, size_t bytes, MemoryKind kind, const char* what);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    VkBuffer handle() const { return buffer_; }
    VkDeviceAddress address() const { return address_; }
    size_t bytes() const { return bytes_; }
    void* mapped() const { return mapped_; }  // HostVisible only

private:
    void release();
    const Device* device_ = nullptr;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    VkDeviceAddress address_ = 0;
    size_t bytes_ = 0;
    void* mapped_ = nullptr;
};

}  // namespace zinc::vk
