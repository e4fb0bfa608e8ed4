#pragma once
// A code object's executable segment decoded once: every instruction of .text (kernels and the
// functions they call) with its handler bound, indexed by image offset so branches, s_getpc and
// s_setpc/s_swappc resolve to instruction indices.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kfd/sim/isa/inst.h"
#include "kfd/sim/isa/profile.h"

namespace zinc::kernels {
class CodeObject;
}

namespace zinc::kfd::isa {

class IsaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Program {
    std::string target;                // "gfx1100"
    uint64_t textBase = 0;             // image offset of the first decoded byte
    std::vector<Inst> insts;
    std::vector<Inst> dual;            // VOPD Y halves
    std::vector<std::string> text;     // per instruction, as LLVM prints it (errors, reports)
    std::vector<int32_t> byOffset;     // (image offset - textBase) / 4 -> instruction index, -1 mid-instruction
    std::vector<std::string> opcodes;  // distinct mnemonics; Inst::opcode indexes it
    std::vector<OpClass> opClass;      // per opcodes entry
    std::vector<std::string> missing;  // mnemonics present with no handler (run-time error if reached)

    // Instruction index at image offset `offset`, or -1.
    int32_t at(uint64_t offset) const {
        if (offset < textBase || (offset - textBase) / 4 >= byOffset.size() || (offset & 3)) return -1;
        return byOffset[(offset - textBase) / 4];
    }
};

// One line of disassembly: what the LLVM MC layer gives per instruction.
struct DisassembledLine {
    uint64_t address = 0;  // image offset
    uint32_t size = 0;     // 0: undecodable word
    std::string text;      // "v_add_f32_e32 v1, v2, v3" (mnemonic, space, operands)
};

// LLVM's AMDGPU disassembler (amdgcn-amd-amdhsa, mcpu = target) over `bytes` at image offset `base`.
std::vector<DisassembledLine> disassemble(const std::string& target, const uint8_t* bytes, size_t size, uint64_t base);

// Decodes the executable segment of `object` and binds handlers. Throws IsaError.
std::shared_ptr<const Program> decodeProgram(const kernels::CodeObject& object);

// The mnemonics the interpreter implements (the coverage gate compares against them).
bool implemented(const std::string& mnemonic);
// "v_add_f32_e32" -> "v_add_f32": the encoding suffix is not part of the operation.
std::string baseMnemonic(const std::string& mnemonic);

}  // namespace zinc::kfd::isa
