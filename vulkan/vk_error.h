#pragma once
// The vulkan tier's one error style: {operation, VkResult, message}. It is a TierError, so
// the CLI prints it as one line and callers of the Tier interface need not know Vulkan.
#include <vulkan/vulkan.h>

#include <string>

#include "runtime/tier.h"

namespace zinc::vk {

const char* resultName(VkResult result);

class VkError : public runtime::TierError {
public:
    VkError(std::string operation, VkResult result, const std::string& message);
    const std::string& operation() const { return operation_; }
    VkResult result() const { return result_; }

private:
    std::string operation_;
    VkResult result_;
};

// Throws VkError unless result is VK_SUCCESS; `what` says what was being done.
void check(VkResult result, const char* operation, const std::string& what = {});

}  // namespace zinc::vk
