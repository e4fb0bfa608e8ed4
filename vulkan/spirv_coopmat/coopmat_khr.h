#pragma once
// SPIR-V rewrite from SPV_NV_cooperative_matrix to SPV_KHR_cooperative_matrix, run at build
// time on glslang's output: Debian 12's glslang 12 compiles GL_NV_cooperative_matrix but not
// GL_KHR_cooperative_matrix, and drivers (NVIDIA, RADV) expose the KHR extension. The two
// differ only in the instructions handled here; see coopmat_khr.cpp.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace zinc::vk::spirv {

// The module with every NV cooperative-matrix instruction replaced by its KHR form. Throws
// std::runtime_error naming the instruction or type id when the module cannot be converted
// (a matrix type used as more than one of A, B and accumulator, or as none; a column-major
// operand that is not a constant bool; an NV instruction this rewrite does not know).
std::vector<uint32_t> coopmatNvToKhr(std::span<const uint32_t> module);

// Opcodes and enumerants both forms use (SPIRV-Headers include/spirv/unified1/
// spirv.core.grammar.json, commit 0d25db97cb9b; SPV_NV_cooperative_matrix and
// SPV_KHR_cooperative_matrix extension specs). Shared with the unit test's decoder.
namespace op {
constexpr uint32_t Extension = 10, Capability = 17, Constant = 43, ConstantTrue = 41, ConstantFalse = 42;
constexpr uint32_t TypeInt = 21, Load = 61;
constexpr uint32_t TypeCooperativeMatrixNV = 5358, CooperativeMatrixLoadNV = 5359, CooperativeMatrixStoreNV = 5360,
                   CooperativeMatrixMulAddNV = 5361, CooperativeMatrixLengthNV = 5362;
constexpr uint32_t TypeCooperativeMatrixKHR = 4456, CooperativeMatrixLoadKHR = 4457, CooperativeMatrixStoreKHR = 4458,
                   CooperativeMatrixMulAddKHR = 4459, CooperativeMatrixLengthKHR = 4460;
}  // namespace op
constexpr uint32_t kCapabilityCooperativeMatrixNV = 5357, kCapabilityCooperativeMatrixKHR = 6022;
// CooperativeMatrixUse and CooperativeMatrixLayout (KHR), both 32-bit integer constant <id>s.
enum class Use : uint32_t { MatrixA = 0, MatrixB = 1, Accumulator = 2 };
constexpr uint32_t kRowMajor = 0, kColumnMajor = 1;

}  // namespace zinc::vk::spirv
