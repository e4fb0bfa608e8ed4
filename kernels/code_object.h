#pragma once
// AMD HSA code objects (ELF64, EM_AMDGPU, code object v4-v6) as clang-19 + ld.lld-19 write
// them: the kernel descriptors (NAME.kd, 64 bytes), the NT_AMDGPU_METADATA note (msgpack)
// and the loadable segments. Every offset and size read from the file is checked, and a
// kernel the launcher cannot launch (hidden arguments it does not fill, scratch, a dynamic
// stack, user SGPRs other than the kernarg pointer) is refused with its name.
// Layouts: LLVM AMDGPUUsage.rst and AMDHSAKernelDescriptor.h (see shared/amd/FACTS.md §4).
#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace zinc::kernels {

class CodeObjectError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// kernel_code_properties bits of the kernel descriptor (user SGPRs are set up in this order).
namespace kd {
inline constexpr uint16_t kEnablePrivateSegmentBuffer = 1u << 0;  // 4 SGPRs
inline constexpr uint16_t kEnableDispatchPtr = 1u << 1;           // 2
inline constexpr uint16_t kEnableQueuePtr = 1u << 2;              // 2
inline constexpr uint16_t kEnableKernargSegmentPtr = 1u << 3;     // 2
inline constexpr uint16_t kEnableDispatchId = 1u << 4;            // 2
inline constexpr uint16_t kEnableFlatScratchInit = 1u << 5;       // 2
inline constexpr uint16_t kEnablePrivateSegmentSize = 1u << 6;    // 1
inline constexpr uint16_t kEnableWavefrontSize32 = 1u << 10;
inline constexpr uint16_t kUsesDynamicStack = 1u << 11;
}  // namespace kd

struct KernelDescriptor {
    uint32_t groupSegmentFixedSize = 0;    // static LDS bytes
    uint32_t privateSegmentFixedSize = 0;  // scratch bytes per work-item
    uint32_t kernargSize = 0;
    int64_t kernelCodeEntryByteOffset = 0;  // from the descriptor's address to the code
    uint32_t computePgmRsrc3 = 0;
    uint32_t computePgmRsrc1 = 0;
    uint32_t computePgmRsrc2 = 0;
    uint16_t kernelCodeProperties = 0;
    uint16_t kernargPreload = 0;

    static KernelDescriptor decode(std::span<const uint8_t, 64> bytes);

    // COMPUTE_PGM_RSRC2.USER_SGPR: how many COMPUTE_USER_DATA_n registers the CP loads.
    uint32_t userSgprCount() const { return (computePgmRsrc2 >> 1) & 0x1fu; }
    bool scratchEnabled() const { return (computePgmRsrc2 & 1u) != 0; }
    bool workgroupIdEnabled(int dim) const { return ((computePgmRsrc2 >> (7 + dim)) & 1u) != 0; }
    uint32_t workitemIdDims() const { return ((computePgmRsrc2 >> 11) & 3u) + 1; }  // TIDIG_COMP_CNT + 1
    bool wave32() const { return (kernelCodeProperties & kd::kEnableWavefrontSize32) != 0; }
    bool usesDynamicStack() const { return (kernelCodeProperties & kd::kUsesDynamicStack) != 0; }
    bool kernargPtrEnabled() const { return (kernelCodeProperties & kd::kEnableKernargSegmentPtr) != 0; }
    // First user SGPR (= COMPUTE_USER_DATA index) of the 64-bit kernarg segment pointer.
    uint32_t kernargPtrSgpr() const;
};

enum class ArgKind : uint8_t { GlobalBuffer, ByValue, Hidden, Other };

struct KernelArg {
    std::string name;          // as written in the source (-cl-kernel-arg-info); may be empty
    std::string typeName;      // "float*", "int", ...
    std::string valueKind;     // "global_buffer", "by_value", "hidden_block_count_x", ...
    std::string addressSpace;  // "global", "local", ... for pointers
    ArgKind kind = ArgKind::Other;
    uint32_t offset = 0;  // in the kernarg segment
    uint32_t size = 0;
};

struct KernelInfo {
    std::string name;
    std::string symbol;  // NAME.kd
    uint32_t kernargSegmentSize = 0;
    uint32_t kernargSegmentAlign = 0;
    uint32_t groupSegmentFixedSize = 0;    // LDS bytes; a PM4 dispatcher puts ceil(/512) in RSRC2.LDS_SIZE
    uint32_t privateSegmentFixedSize = 0;
    uint32_t sgprCount = 0;
    uint32_t vgprCount = 0;
    uint32_t wavefrontSize = 0;
    uint32_t maxFlatWorkgroupSize = 0;
    std::array<uint32_t, 3> reqdWorkgroupSize{};  // zeros when the kernel does not fix it
    bool usesDynamicStack = false;
    std::vector<KernelArg> args;  // explicit and hidden, in kernarg order
    KernelDescriptor descriptor;
    uint64_t descriptorAddress = 0;  // of NAME.kd in the loaded image (segment virtual address)
    uint64_t entryAddress = 0;       // descriptorAddress + kernelCodeEntryByteOffset (256-aligned)

    const KernelArg* arg(std::string_view argName) const;
    size_t explicitArgCount() const;
    // RSRC2.LDS_SIZE value for this kernel: LDS in 512-byte granules (gfx11 / gfx12).
    uint32_t ldsGranules() const { return (groupSegmentFixedSize + 511) / 512; }
};

struct LoadSegment {
    uint64_t vaddr = 0;
    uint64_t memSize = 0;
    uint64_t fileOffset = 0;
    uint64_t fileSize = 0;
    uint32_t flags = 0;  // PF_X 1, PF_W 2, PF_R 4
};

// What the launcher provides beyond the kernarg segment pointer.
struct LaunchSupport {
    std::vector<std::string> hiddenArgs;  // value kinds it fills, e.g. "hidden_block_count_x"
    bool scratch = false;                 // it sets up a private segment (scratch)
};

class CodeObject {
public:
    // `origin` names the object in errors ("embedded gfx1100", a path). Copies the bytes.
    static CodeObject parse(std::span<const uint8_t> bytes, std::string_view origin,
                            const LaunchSupport& support = {});

    const std::string& origin() const { return origin_; }
    const std::string& target() const { return target_; }              // "gfx1100"
    const std::string& targetTriple() const { return targetTriple_; }  // "amdgcn-amd-amdhsa--gfx1100"
    uint32_t elfFlags() const { return elfFlags_; }
    std::span<const KernelInfo> kernels() const { return kernels_; }
    const KernelInfo* find(std::string_view name) const;
    // The kernel whose code starts at `entryAddress` (an image offset: what COMPUTE_PGM_LO/HI
    // point at, minus the image's load address), or nullptr — how a command processor finds
    // the kernel it is asked to run.
    const KernelInfo* findByEntry(uint64_t entryAddress) const;
    const KernelInfo& kernel(std::string_view name) const;  // throws naming the kernel and object
    std::span<const LoadSegment> segments() const { return segments_; }
    // Bytes from virtual address 0 to the end of the last segment.
    uint64_t imageSize() const;
    // The loaded layout: every PT_LOAD segment at its virtual address, zero-filled between.
    std::vector<uint8_t> loadImage() const;
    std::span<const uint8_t> bytes() const { return bytes_; }

private:
    std::string origin_, target_, targetTriple_;
    uint32_t elfFlags_ = 0;
    std::vector<uint8_t> bytes_;
    std::vector<KernelInfo> kernels_;
    std::vector<LoadSegment> segments_;
    friend class CodeObjectParser;
};

// The gfx target named by an EF_AMDGPU_MACH value (e_flags & 0xff), or "" when unknown here.
std::string_view gfxTargetOfMach(uint32_t mach);

}  // namespace zinc::kernels
