#pragma once
// The kernels as built into the binary: one code object per gfx target (compiled from
// kernels/cl/ at build time by clang-19 + ld.lld-19) and the same OpenCL C text for PoCL.
#include <cstdint>
#include <span>
#include <string_view>

namespace zinc::kernels {

struct EmbeddedCodeObject {
    std::string_view target;  // "gfx1100", "gfx1201"
    std::span<const uint8_t> bytes;
};

std::span<const EmbeddedCodeObject> embeddedCodeObjects();
// The code object for a gfx target; empty when none was built for it.
std::span<const uint8_t> embeddedCodeObject(std::string_view target);

// kernels/cl/zinc_kernels.cl with its includes inlined.
std::string_view kernelSource();

// Options the code objects were compiled with that change numerics; PoCL builds with them too.
inline constexpr std::string_view kKernelNumericsOptions = "-cl-fp32-correctly-rounded-divide-sqrt";

}  // namespace zinc::kernels
