// The AMDGPU MC disassembler of LLVM 19 (the layer llvm-objdump-19 uses), reached through LLVM's
// C disassembler API in libLLVM.so.19.1, opened the first time the interpreter decodes a code
// object. zinc-rt itself does not link LLVM: a build for a real Radeon carries no 130 MB
// library it never calls, and only `--sim-exec=isa` (and `zinc-rt kernels`) need the package
// libllvm19 at run time (../shared/amd/TOOLCHAIN.md, "Decoding machine code";
// llvm-c/Disassembler.h for the calls).
#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "kfd/sim/isa/program.h"

namespace zinc::kfd::isa {
namespace {

// llvm-c/Disassembler.h, declared here because the header is only in llvm-19-dev.
using DisasmContext = void*;
using CreateDisasmCpu = DisasmContext (*)(const char* triple, const char* cpu, void* info, int tagType, void* getOpInfo,
                                          void* symbolLookUp);
using DisasmInstruction = size_t (*)(DisasmContext, uint8_t* bytes, uint64_t size, uint64_t pc, char* out, size_t outSize);
using DisasmDispose = void (*)(DisasmContext);
using Initialize = void (*)();

constexpr const char* kLibraries[] = {"libLLVM.so.19.1", "libLLVM-19.so"};

struct LlvmDisassembler {
    CreateDisasmCpu create = nullptr;
    DisasmInstruction instruction = nullptr;
    DisasmDispose dispose = nullptr;
    std::string error;  // why it cannot be used; empty when it can
};

template <typename F>
F symbol(void* library, const char* name, std::string& error) {
    void* found = dlsym(library, name);
    if (!found && error.empty()) error = std::string("libLLVM 19 has no symbol ") + name;
    return reinterpret_cast<F>(found);
}

const LlvmDisassembler& llvm() {
    static LlvmDisassembler d;
    static std::once_flag once;
    std::call_once(once, [] {
        void* library = nullptr;
        std::string tried;
        for (const char* name : kLibraries) {
            library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (library) break;
            tried += std::string(tried.empty() ? "" : "; ") + dlerror();
        }
        if (!library) {
            d.error = "the ISA interpreter decodes with LLVM 19's AMDGPU disassembler and could not open it (" + tried +
                      "); install Debian's libllvm19, or run the simulated GPU with --sim-exec=pocl";
            return;
        }
        for (const char* init : {"LLVMInitializeAMDGPUTargetInfo", "LLVMInitializeAMDGPUTargetMC", "LLVMInitializeAMDGPUDisassembler"})
            if (auto f = symbol<Initialize>(library, init, d.error)) f();
        d.create = symbol<CreateDisasmCpu>(library, "LLVMCreateDisasmCPU", d.error);
        d.instruction = symbol<DisasmInstruction>(library, "LLVMDisasmInstruction", d.error);
        d.dispose = symbol<DisasmDispose>(library, "LLVMDisasmDispose", d.error);
    });
    return d;
}

// The C API prints "\tmnemonic operands" and, after " ;", comments the disassembler adds.
std::string instructionText(const char* printed) {
    std::string text(printed);
    if (const size_t comment = text.find(" ;"); comment != std::string::npos) text.resize(comment);
    const size_t b = text.find_first_not_of(" \t");
    const size_t e = text.find_last_not_of(" \t");
    return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

}  // namespace

std::vector<DisassembledLine> disassemble(const std::string& target, const uint8_t* bytes, size_t size, uint64_t base) {
    const LlvmDisassembler& d = llvm();
    if (!d.error.empty()) throw IsaError(d.error);
    DisasmContext context = d.create("amdgcn-amd-amdhsa", target.c_str(), nullptr, 0, nullptr, nullptr);
    if (!context) throw IsaError("LLVM 19 has no AMDGPU disassembler for " + target);
    std::vector<DisassembledLine> lines;
    std::vector<uint8_t> code(bytes, bytes + size);  // the C API takes a non-const pointer
    char printed[512];
    for (uint64_t at = 0; at < size;) {
        DisassembledLine line;
        line.address = base + at;
        printed[0] = '\0';
        const size_t length = d.instruction(context, code.data() + at, size - at, base + at, printed, sizeof printed);
        if (length) {
            line.text = instructionText(printed);
            line.size = uint32_t(length);
            at += length;
        } else {
            line.size = 0;
            at += 4;
        }
        lines.push_back(std::move(line));
    }
    d.dispose(context);
    return lines;
}

}  // namespace zinc::kfd::isa
