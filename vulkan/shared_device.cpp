#include "vulkan/shared_device.h"

#include <map>
#include <mutex>
#include <utility>

namespace zinc::vk {

SharedDevice::SharedDevice(int32_t index, const DeviceOptions& options)
    : device_(Instance::shared(), index, options), pipelines_(device_) {}

std::shared_ptr<SharedDevice> SharedDevice::get(int32_t index) {
    using Key = std::pair<int32_t, DeviceOptions>;
    static std::mutex mutex;
    static auto* devices = new std::map<Key, std::shared_ptr<SharedDevice>>();  // never destroyed (above)
    const std::lock_guard lock(mutex);
    Key key{index, DeviceOptions::fromEnvironment()};
    std::shared_ptr<SharedDevice>& slot = (*devices)[key];
    if (!slot || slot->device().lost()) slot = std::make_shared<SharedDevice>(index, key.second);
    return slot;
}

}  // namespace zinc::vk
