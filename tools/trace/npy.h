#pragma once
// A float32 vector as a .npy file (NumPy format 1.0: magic, header dict padded to 64 bytes,
// little-endian data), so dumped tensors open with numpy.load. Throws naming the file.
#include <span>
#include <string>

namespace zinc::trace {

void writeNpy(const std::string& path, std::span<const float> values);

}  // namespace zinc::trace
