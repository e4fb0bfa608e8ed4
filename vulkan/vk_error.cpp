#include "vulkan/vk_error.h"

#include <fmt/format.h>

namespace zinc::vk {

const char* resultName(VkResult result) {
    switch (result) {
#define ZINC_VK_CASE(R) \
    case R: return #R;
        ZINC_VK_CASE(VK_SUCCESS)
        ZINC_VK_CASE(VK_NOT_READY)
        ZINC_VK_CASE(VK_TIMEOUT)
        ZINC_VK_CASE(VK_INCOMPLETE)
        ZINC_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
        ZINC_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        ZINC_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
        ZINC_VK_CASE(VK_ERROR_DEVICE_LOST)
        ZINC_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
        ZINC_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
        ZINC_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
        ZINC_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
        ZINC_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
        ZINC_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
        ZINC_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
        ZINC_VK_CASE(VK_ERROR_UNKNOWN)
        ZINC_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
        ZINC_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef ZINC_VK_CASE
        default: return "VK_ERROR_(unnamed)";
    }
}

VkError::VkError(std::string operation, VkResult result, const std::string& message)
    : runtime::TierError(fmt::format("vulkan tier: {} failed with {} ({}){}{}", operation, resultName(result),
                                     static_cast<int>(result), message.empty() ? "" : ": ", message)),
      operation_(std::move(operation)),
      result_(result) {}

void check(VkResult result, const char* operation, const std::string& what) {
    if (result != VK_SUCCESS) throw VkError(operation, result, what);
}

}  // namespace zinc::vk
