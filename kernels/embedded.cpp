#include "kernels/embedded.h"

namespace zinc::kernels {

std::span<const uint8_t> embeddedCodeObject(std::string_view target) {
    for (const auto& object : embeddedCodeObjects())
        if (object.target == target) return object.bytes;
    return {};
}

}  // namespace zinc::kernels
