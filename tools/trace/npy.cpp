#include "tools/trace/npy.h"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <fstream>
#include <stdexcept>

namespace zinc::trace {

void writeNpy(const std::string& path, std::span<const float> values) {
    static_assert(std::endian::native == std::endian::little, "the .npy files say '<f4'");
    std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", values.size());
    // magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of
    // 64 and ended by a newline (the format's alignment rule).
    const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
    header.append(total - 10 - header.size() - 1, ' ');
    header += '\n';
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const auto length = static_cast<uint16_t>(header.size());
    out.write("\x93NUMPY\x01\x00", 8);
    out.put(static_cast<char>(length & 0xFF));
    out.put(static_cast<char>(length >> 8));
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size_bytes()));
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

}  // namespace zinc::trace
