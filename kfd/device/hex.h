#pragma once
// "0x1f": how the kfd tier's messages write addresses, sizes and register values.
#include <cstdint>
#include <cstdio>
#include <string>

namespace zinc::kfd {

inline std::string hex(uint64_t v) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return text;
}

}  // namespace zinc::kfd
