#include "vulkan/spirv_coopmat/coopmat_khr.h"

#include <algorithm>
#include <map>
#include <string>

// What changes between the two extensions (the specs' "Modifications to the SPIR-V
// Specification" and the grammar's operand lists):
//   OpTypeCooperativeMatrixNV  (Result, ComponentType, Scope, Rows, Columns)
//   -> OpTypeCooperativeMatrixKHR (Result, ComponentType, Scope, Rows, Columns, Use): Use is the
//      <id> of a 32-bit integer constant, MatrixA / MatrixB / MatrixAccumulator, taken from the
//      operand each type fills in OpCooperativeMatrixMulAddNV (A, B, C and the result).
//   OpCooperativeMatrixLoadNV (ResultType, Result, Pointer, Stride, ColumnMajor, [MemoryAccess])
//   -> OpCooperativeMatrixLoadKHR (ResultType, Result, Pointer, MemoryLayout, [Stride], [MemoryOperand])
//   OpCooperativeMatrixStoreNV (Pointer, Object, Stride, ColumnMajor, [MemoryAccess])
//   -> OpCooperativeMatrixStoreKHR (Pointer, Object, MemoryLayout, [Stride], [MemoryOperand]);
//      ColumnMajor is a bool <id> (glslang: OpConstantTrue/False), MemoryLayout the <id> of a
//      32-bit integer constant RowMajorKHR 0 / ColumnMajorKHR 1.
//   OpCooperativeMatrixMulAddNV / LengthNV -> the KHR opcodes, same operands (float matrices
//   need no Cooperative Matrix Operands).
// Constants, OpCompositeExtract/Insert, arithmetic on whole matrices and conversions are
// spelled the same for both types.
namespace zinc::vk::spirv {
namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr size_t kHeaderWords = 5;

std::string idName(uint32_t id) {
    std::string s = "%";
    s += std::to_string(id);  // appended: GCC 12 -Wrestrict misfires on "%" + string
    return s;
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("spirv_coopmat_khr: " + what); }

// A literal string operand as SPIR-V words (UTF-8, nul-terminated, zero-padded).
std::vector<uint32_t> stringWords(const std::string& s) {
    std::vector<uint32_t> words(s.size() / 4 + 1, 0u);
    for (size_t i = 0; i < s.size(); ++i) words[i / 4] |= uint32_t(uint8_t(s[i])) << (8 * (i % 4));
    return words;
}

std::string stringOf(std::span<const uint32_t> words) {
    std::string s;
    for (uint32_t w : words)
        for (int b = 0; b < 4; ++b) {
            const char c = char((w >> (8 * b)) & 0xFFu);
            if (c == 0) return s;
            s += c;
        }
    return s;
}

// Opcodes whose word 1 is a result type and word 2 a result that can be a cooperative matrix
// value: how MulAdd operands are traced back to their types. An operand made by anything else
// is a build error, not a guess.
bool yieldsMatrixValue(uint32_t opcode) {
    switch (opcode) {
        case 1:    // OpUndef
        case 44:   // OpConstantComposite
        case 46:   // OpConstantNull
        case 55:   // OpFunctionParameter
        case 57:   // OpFunctionCall
        case op::Load:
        case 80:   // OpCompositeConstruct
        case 83:   // OpCopyObject
        case 115:  // OpFConvert
        case 127:  // OpFNegate
        case 129:  // OpFAdd
        case 131:  // OpFSub
        case 133:  // OpFMul
        case 136:  // OpFDiv
        case 143:  // OpMatrixTimesScalar
        case 169:  // OpSelect
        case 245:  // OpPhi
        case op::CooperativeMatrixLoadNV:
        case op::CooperativeMatrixMulAddNV: return true;
        default: return false;
    }
}

struct Instruction {
    size_t at;  // first word
    uint32_t opcode, words;
};

struct Module {
    std::span<const uint32_t> w;
    std::vector<Instruction> list;
    std::map<uint32_t, uint32_t> typeOf;               // value id -> its type id
    std::map<uint32_t, uint32_t> boolConstant;          // OpConstantTrue/False id -> 1/0
    std::map<uint32_t, uint32_t> int32Types;            // OpTypeInt 32 ids
    std::map<uint32_t, uint32_t> constantType;          // OpConstant id -> its type
    std::map<uint32_t, uint32_t> roles;                 // NV matrix type -> bit per Use
    std::vector<uint32_t> matrixTypes;                  // NV matrix types in order

    explicit Module(std::span<const uint32_t> words) : w(words) {
        if (w.size() < kHeaderWords || w[0] != kMagic) fail("not a SPIR-V module (bad magic or too short)");
        for (size_t at = kHeaderWords; at < w.size();) {
            const uint32_t count = w[at] >> 16, opcode = w[at] & 0xFFFFu;
            if (count == 0 || at + count > w.size()) fail("truncated instruction at word " + std::to_string(at));
            list.push_back({at, opcode, count});
            if (yieldsMatrixValue(opcode) && count >= 3) typeOf[w[at + 2]] = w[at + 1];
            if (opcode == op::ConstantTrue) boolConstant[w[at + 2]] = 1;
            if (opcode == op::ConstantFalse) boolConstant[w[at + 2]] = 0;
            if (opcode == op::TypeInt && w[at + 2] == 32) int32Types[w[at + 1]] = 1;
            if (opcode == op::Constant) constantType[w[at + 2]] = w[at + 1];
            if (opcode == op::TypeCooperativeMatrixNV) {
                if (count != 6) fail("OpTypeCooperativeMatrixNV with " + std::to_string(count) + " words");
                matrixTypes.push_back(w[at + 1]);
                roles[w[at + 1]] = 0;
            }
            at += count;
        }
    }

    void markRole(uint32_t value, Use use, size_t at) {
        const auto type = typeOf.find(value);
        if (type == typeOf.end())
            fail("cannot tell the type of MulAdd operand " + idName(value) + " (word " + std::to_string(at) + ")");
        const auto role = roles.find(type->second);
        if (role == roles.end()) fail("MulAdd operand " + idName(value) + " is not an NV cooperative matrix");
        role->second |= 1u << uint32_t(use);
    }

    // Every matrix type's one Use, from the MulAdds.
    std::map<uint32_t, Use> uses() {
        for (const auto& i : list) {
            if (i.opcode != op::CooperativeMatrixMulAddNV) continue;
            if (i.words != 6) fail("OpCooperativeMatrixMulAddNV with " + std::to_string(i.words) + " words");
            roles.at(w[i.at + 1]) |= 1u << uint32_t(Use::Accumulator);  // result type
            markRole(w[i.at + 3], Use::MatrixA, i.at);
            markRole(w[i.at + 4], Use::MatrixB, i.at);
            markRole(w[i.at + 5], Use::Accumulator, i.at);
        }
        std::map<uint32_t, Use> out;
        for (const auto& [type, bits] : roles) {
            if (bits == 0) fail("OpTypeCooperativeMatrixNV " + idName(type) + " is not used by any MulAdd: its Use is unknown");
            if (bits & (bits - 1))
                fail("OpTypeCooperativeMatrixNV " + idName(type) +
                     " is used in more than one of A, B, accumulator: give each role its own type (e.g. distinct spec constants for K)");
            out[type] = bits == 1 ? Use::MatrixA : bits == 2 ? Use::MatrixB : Use::Accumulator;
        }
        return out;
    }

    uint32_t layoutOf(uint32_t columnMajor, size_t at) const {
        const auto c = boolConstant.find(columnMajor);
        if (c == boolConstant.end())
            fail("column-major operand " + idName(columnMajor) + " at word " + std::to_string(at) +
                 " is not an OpConstantTrue/False");
        return c->second ? kColumnMajor : kRowMajor;
    }
};

}  // namespace

std::vector<uint32_t> coopmatNvToKhr(std::span<const uint32_t> words) {
    Module m(words);
    if (m.matrixTypes.empty()) return {words.begin(), words.end()};
    const auto use = m.uses();

    // Three new 32-bit integer constants 0, 1, 2 (Use and MemoryLayout values), typed as the
    // first matrix type's Scope constant (a 32-bit integer by both specs) and placed just
    // before that type, where the scope constant and its type are already declared.
    const auto& first = *std::find_if(m.list.begin(), m.list.end(),
                                      [](const Instruction& i) { return i.opcode == op::TypeCooperativeMatrixNV; });
    const auto scopeType = m.constantType.find(words[first.at + 3]);
    if (scopeType == m.constantType.end() || !m.int32Types.count(scopeType->second))
        fail("the Scope of " + idName(words[first.at + 1]) + " is not a 32-bit integer OpConstant");
    const uint32_t bound = words[3];
    const uint32_t constantId[3] = {bound, bound + 1, bound + 2};

    std::vector<uint32_t> out(words.begin(), words.begin() + kHeaderWords);
    out[3] = bound + 3;
    for (const auto& i : m.list) {
        const auto in = words.subspan(i.at, i.words);
        auto emit = [&out](uint32_t opcode, const std::vector<uint32_t>& operands, std::span<const uint32_t> tail) {
            out.push_back(uint32_t(1 + operands.size() + tail.size()) << 16 | opcode);
            out.insert(out.end(), operands.begin(), operands.end());
            out.insert(out.end(), tail.begin(), tail.end());
        };
        switch (i.opcode) {
            case op::Capability:
                emit(op::Capability, {in[1] == kCapabilityCooperativeMatrixNV ? kCapabilityCooperativeMatrixKHR : in[1]}, {});
                break;
            case op::Extension: {
                const std::string name = stringOf(in.subspan(1));
                const auto text = stringWords(name == "SPV_NV_cooperative_matrix" ? "SPV_KHR_cooperative_matrix" : name);
                emit(op::Extension, {}, text);
                break;
            }
            case op::TypeCooperativeMatrixNV:
                if (&i == &first)
                    for (uint32_t v = 0; v < 3; ++v) emit(op::Constant, {scopeType->second, constantId[v], v}, {});
                emit(op::TypeCooperativeMatrixKHR,
                     {in[1], in[2], in[3], in[4], in[5], constantId[uint32_t(use.at(in[1]))]}, {});
                break;
            case op::CooperativeMatrixLoadNV:
                if (i.words < 6) fail("short OpCooperativeMatrixLoadNV at word " + std::to_string(i.at));
                emit(op::CooperativeMatrixLoadKHR, {in[1], in[2], in[3], constantId[m.layoutOf(in[5], i.at)], in[4]},
                     in.subspan(6));
                break;
            case op::CooperativeMatrixStoreNV:
                if (i.words < 5) fail("short OpCooperativeMatrixStoreNV at word " + std::to_string(i.at));
                emit(op::CooperativeMatrixStoreKHR, {in[1], in[2], constantId[m.layoutOf(in[4], i.at)], in[3]},
                     in.subspan(5));
                break;
            case op::CooperativeMatrixMulAddNV: emit(op::CooperativeMatrixMulAddKHR, {}, in.subspan(1)); break;
            case op::CooperativeMatrixLengthNV: emit(op::CooperativeMatrixLengthKHR, {}, in.subspan(1)); break;
            default:
                if (i.opcode >= 5358 && i.opcode <= 5362) fail("unexpected NV opcode " + std::to_string(i.opcode));
                out.insert(out.end(), in.begin(), in.end());
        }
    }
    return out;
}

}  // namespace zinc::vk::spirv
