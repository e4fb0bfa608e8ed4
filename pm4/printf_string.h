#pragma once
// printf into a std::string (at most 511 characters): the decoder's and executor's messages.
#include <algorithm>
#include <cstdio>
#include <string>

namespace zinc::pm4 {

template <typename... Args>
std::string format(const char* fmt, Args... args) {
    char buf[512];
    const int n = std::snprintf(buf, sizeof buf, fmt, args...);
    return std::string(buf, n < 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1));
}

}  // namespace zinc::pm4
