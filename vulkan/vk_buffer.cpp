#include "vulkan/vk_buffer.h"

#include <fmt/format.h>

#include <utility>

#include "vulkan/vk_error.h"

namespace zinc::vk {

DeviceBuffer::DeviceBuffer(const Device& device, size_t bytes, MemoryKind kind, const char* what)
    : device_(&device), bytes_(bytes) {
    const VkDevice dev = device.handle();
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = std::max<size_t>(bytes, 256);
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                 VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;  // attention_args.comp's dispatch counts
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(dev, &info, nullptr, &buffer_), "vkCreateBuffer", fmt::format("{} ({} bytes)", what, bytes));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buffer_, &req);
    const uint32_t type =
        kind == MemoryKind::DeviceLocal
            ? device.memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0)
            : device.memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.pNext = &flags;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    const VkResult r = vkAllocateMemory(dev, &alloc, nullptr, &memory_);
    if (r != VK_SUCCESS) {
        release();
        throw VkError("vkAllocateMemory", r, fmt::format("{}: {:.1f} MiB", what, static_cast<double>(req.size) / (1 << 20)));
    }
    check(vkBindBufferMemory(dev, buffer_, memory_, 0), "vkBindBufferMemory", what);
    if (kind == MemoryKind::HostVisible) check(vkMapMemory(dev, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory", what);
    VkBufferDeviceAddressInfo addr{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    addr.buffer = buffer_;
    address_ = vkGetBufferDeviceAddress(dev, &addr);
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
    if (!device_) return;
    if (buffer_) vkDestroyBuffer(device_->handle(), buffer_, nullptr);
    if (memory_) vkFreeMemory(device_->handle(), memory_, nullptr);
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    mapped_ = nullptr;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        release();
        device_ = std::exchange(o.device_, nullptr);
        buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
        memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
        address_ = std::exchange(o.address_, 0);
        bytes_ = std::exchange(o.bytes_, 0);
        mapped_ = std::exchange(o.mapped_, nullptr);
    }
    return *this;
}

}  // namespace zinc::vk
