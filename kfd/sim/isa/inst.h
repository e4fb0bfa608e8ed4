#pragma once
// A decoded AMDGPU instruction as the interpreter keeps it: decoded once per code object (LLVM's
// MC disassembler gives the text, `parseInstruction` turns it into operands and modifiers and
// binds the opcode's handler), executed many times without looking at bytes again.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace zinc::kfd::isa {

// Where the interpreter keeps the scalar registers in one array: s0-s105 (RDNA3/RDNA4 ISA guides,
// "Scalar General-Purpose Registers"), then VCC, the trap temporaries, M0, NULL and EXEC.
inline constexpr uint32_t kVccLo = 106, kTtmp0 = 108, kM0 = 125, kNull = 124, kExecLo = 126, kSgprFile = 128;

enum class OpKind : uint8_t { None, Vgpr, Sgpr, Scc, IntConst, FloatConst, Literal, Off };

struct Operand {
    OpKind kind = OpKind::None;
    uint16_t reg = 0;     // first register (Vgpr / Sgpr)
    uint8_t count = 1;    // registers (dwords) named
    bool neg = false, abs = false;
    int64_t value = 0;    // IntConst / Literal
    double fvalue = 0;    // FloatConst (an inline constant printed as a float: its meaning depends on the operand's type)
};

struct Wave;
struct Inst;
using Handler = void (*)(Wave&, const Inst&);

struct Inst {
    Handler run = nullptr;
    uint8_t nops = 0;
    std::array<Operand, 6> op{};
    // Modifiers as the disassembler prints them.
    bool clamp = false;
    uint8_t omod = 0;          // 0 none, 1 mul:2, 2 mul:4, 3 div:2
    uint8_t opSel = 0, opSelHi = 0, negLo = 0, negHi = 0;  // bit i: operand i (opSelHi defaults set by parser)
    bool opSelHiGiven = false;
    int32_t offset = 0, offset0 = 0, offset1 = 0;
    int32_t simm = 0;          // SOPP/SOPK immediate (branch distance in dwords, s_movk value, s_waitcnt bits)
    std::array<int8_t, 3> counts{-1, -1, -1};  // s_waitcnt vmcnt/lgkmcnt/vscnt (-1: not waited for)
    uint32_t index = 0;        // in Program::insts
    uint32_t size = 4;         // bytes
    uint64_t address = 0;      // image offset
    int32_t target = -1;       // branch target instruction index
    int32_t pair = -1;         // VOPD: index of the Y half in Program::dual
    uint16_t opcode = 0;       // index into the opcode name table (for counts and errors)
};

}  // namespace zinc::kfd::isa
