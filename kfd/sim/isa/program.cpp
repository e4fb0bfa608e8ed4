// Turns LLVM's printed instructions into Inst records once per code object: operands (registers,
// inline constants, literals, the -/|| float modifiers), the modifiers clang emits (offsets,
// neg_lo, op_sel, clamp, omod, s_waitcnt counters), branch targets, and the handler per opcode.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <unordered_map>

#include "kernels/code_object.h"
#include "kfd/sim/isa/program.h"
#include "kfd/sim/isa/wave.h"

namespace zinc::kfd::isa {
namespace {

const std::unordered_map<std::string, Handler>& handlers() {
    static const std::unordered_map<std::string, Handler> table = [] {
        std::unordered_map<std::string, Handler> t;
        for (auto list : {scalarOps(), vectorOps(), memoryOps()})
            for (const OpEntry& e : list) t.emplace(e.name, e.run);
        return t;
    }();
    return table;
}

void missingHandler(Wave& w, const Inst& i) {
    w.fail("the interpreter does not implement " + w.program->opcodes[i.opcode]);
}

// VOPD: the two halves read their sources before either writes (RDNA3 ISA guide, "VOPD"), so
// clang may pair `v_add_f32 v4, ...` with a Y half that reads the old v4. When Y reads X's
// destination, X's result is held back until Y has run.
void dualHandler(Wave& w, const Inst& i) {
    const Inst& x = w.program->dual[size_t(i.pair)];
    const Inst& y = w.program->dual[size_t(i.pair) + 1];
    const uint32_t xd = x.op[0].reg;
    bool yReadsX = false;
    for (uint8_t k = 1; k < y.nops; ++k) yReadsX |= y.op[k].kind == OpKind::Vgpr && y.op[k].reg == xd;
    if (!yReadsX) {
        x.run(w, x);
        y.run(w, y);
        return;
    }
    std::array<uint32_t, 32> before, after;
    for (uint32_t l = 0; l < 32; ++l) before[l] = w.v(xd, l);
    x.run(w, x);
    for (uint32_t l = 0; l < 32; ++l) {
        after[l] = w.v(xd, l);
        w.v(xd, l) = before[l];
    }
    y.run(w, y);
    for (uint32_t l = 0; l < 32; ++l) w.v(xd, l) = after[l];
}

[[noreturn]] void bad(const std::string& text, const std::string& why) { throw IsaError("cannot decode \"" + text + "\": " + why); }

int64_t parseInt(const std::string& s, const std::string& text) {
    int64_t v = 0;
    const bool neg = !s.empty() && s[0] == '-';
    const std::string body = neg ? s.substr(1) : s;
    const bool hex = body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X');
    const char* b = body.data() + (hex ? 2 : 0);
    const auto r = std::from_chars(b, body.data() + body.size(), v, hex ? 16 : 10);
    if (r.ec != std::errc() || r.ptr != body.data() + body.size()) bad(text, "number \"" + s + "\"");
    return neg ? -v : v;
}

// "v[8:11]" / "s5" / "ttmp9" -> first register and count.
bool parseRange(const std::string& t, const std::string& prefix, uint16_t& reg, uint8_t& count, const std::string& text) {
    if (t.rfind(prefix, 0) != 0 || t.size() == prefix.size()) return false;
    const std::string rest = t.substr(prefix.size());
    if (rest[0] == '[') {
        const size_t colon = rest.find(':');
        if (colon == std::string::npos || rest.back() != ']') bad(text, "register \"" + t + "\"");
        const int64_t a = parseInt(rest.substr(1, colon - 1), text), b = parseInt(rest.substr(colon + 1, rest.size() - colon - 2), text);
        reg = uint16_t(a);
        count = uint8_t(b - a + 1);
        return true;
    }
    if (!std::isdigit(static_cast<unsigned char>(rest[0]))) return false;
    reg = uint16_t(parseInt(rest, text));
    count = 1;
    return true;
}

Operand parseOperand(std::string t, const std::string& text) {
    Operand o;
    if (t.size() > 1 && t[0] == '-' && (t[1] == '|' || std::isalpha(static_cast<unsigned char>(t[1])))) {
        o.neg = true;
        t = t.substr(1);
    }
    if (t.size() > 2 && t.front() == '|' && t.back() == '|') {
        o.abs = true;
        t = t.substr(1, t.size() - 2);
    }
    static const std::map<std::string, std::pair<uint16_t, uint8_t>> named = {
        {"vcc_lo", {kVccLo, 1}}, {"vcc_hi", {kVccLo + 1, 1}}, {"vcc", {kVccLo, 2}},
        {"exec_lo", {kExecLo, 1}}, {"exec_hi", {kExecLo + 1, 1}}, {"exec", {kExecLo, 2}},
        {"m0", {kM0, 1}}, {"null", {kNull, 1}}};
    if (auto it = named.find(t); it != named.end()) {
        o.kind = OpKind::Sgpr;
        o.reg = it->second.first;
        o.count = it->second.second;
        return o;
    }
    if (t == "scc" || t == "src_scc") {
        o.kind = OpKind::Scc;
        return o;
    }
    if (t == "off") {
        o.kind = OpKind::Off;
        return o;
    }
    if (parseRange(t, "v", o.reg, o.count, text)) {
        o.kind = OpKind::Vgpr;
        return o;
    }
    if (parseRange(t, "ttmp", o.reg, o.count, text)) {
        o.kind = OpKind::Sgpr;
        o.reg = uint16_t(o.reg + kTtmp0);
        return o;
    }
    if (parseRange(t, "s", o.reg, o.count, text)) {
        o.kind = OpKind::Sgpr;
        if (o.reg + o.count > 106) bad(text, "SGPR range \"" + t + "\"");
        return o;
    }
    if (t.find('.') != std::string::npos) {
        o.kind = OpKind::FloatConst;
        o.fvalue = std::stod(t);
        // The inline constant 1/(2*pi) prints rounded; it stands for the exact value.
        if (std::fabs(o.fvalue - 0.15915494) < 1e-7) o.fvalue = 0.5 * std::numbers::inv_pi;
        return o;
    }
    if (!t.empty() && (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-')) {
        o.value = parseInt(t, text);
        const bool hex = t.find("0x") != std::string::npos;
        o.kind = hex ? OpKind::Literal : OpKind::IntConst;
        return o;
    }
    bad(text, "operand \"" + t + "\"");
}

uint8_t parseBits(const std::string& list, const std::string& text) {  // "[1,1,0]"
    if (list.size() < 3 || list.front() != '[' || list.back() != ']') bad(text, "modifier list \"" + list + "\"");
    uint8_t bits = 0;
    int k = 0;
    for (char c : list.substr(1, list.size() - 2)) {
        if (c == ',') ++k;
        else if (c == '1') bits = uint8_t(bits | (1u << k));
    }
    return bits;
}

// "vmcnt(3)" -> 3 into counts[slot].
void parseWaitcnt(Inst& inst, const std::string& rest, const std::string& text) {
    static const std::pair<const char*, int> names[] = {{"vmcnt(", 0}, {"lgkmcnt(", 1}, {"expcnt(", -1}};
    for (const auto& [name, slot] : names) {
        const size_t at = rest.find(name);
        if (at == std::string::npos) continue;
        const size_t open = at + std::string(name).size();
        const int64_t n = parseInt(rest.substr(open, rest.find(')', open) - open), text);
        if (slot >= 0) inst.counts[size_t(slot)] = int8_t(n);
    }
}

void parseInto(Inst& inst, const std::string& text, std::string& mnemonic) {
    const size_t space = text.find(' ');
    mnemonic = text.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : text.substr(space + 1);
    if (mnemonic == "s_waitcnt") {
        parseWaitcnt(inst, rest, text);
        return;
    }
    if (mnemonic == "s_delay_alu" || mnemonic == "s_sendmsg" || mnemonic == "s_waitcnt_depctr") return;  // no architectural effect here
    // Operands are comma separated; the first token after the last operand starts the modifiers.
    std::vector<std::string> tokens;
    {
        size_t at = 0;
        while (at < rest.size()) {
            size_t end = rest.find(' ', at);
            if (end == std::string::npos) end = rest.size();
            if (end > at) tokens.push_back(rest.substr(at, end - at));
            at = end + 1;
        }
    }
    size_t k = 0;
    for (; k < tokens.size(); ++k) {
        std::string t = tokens[k];
        const bool more = t.back() == ',';
        if (more) t.pop_back();
        if (!more && k > 0 && t.find(':') != std::string::npos && t[0] != 'v' && t[0] != 's' && t[0] != 't') break;
        if (!more && (t == "clamp" || t.rfind("offset", 0) == 0 || t.rfind("scope:", 0) == 0 || t.rfind("th:", 0) == 0)) break;
        if (inst.nops == inst.op.size()) bad(text, "too many operands");
        inst.op[inst.nops++] = parseOperand(t, text);
        if (!more) {
            ++k;
            break;
        }
    }
    for (; k < tokens.size(); ++k) {
        const std::string& t = tokens[k];
        const size_t colon = t.find(':');
        const std::string key = t.substr(0, colon), value = colon == std::string::npos ? "" : t.substr(colon + 1);
        if (key == "clamp") inst.clamp = true;
        else if (key == "offset") inst.offset = int32_t(parseInt(value, text));
        else if (key == "offset0") inst.offset0 = int32_t(parseInt(value, text));
        else if (key == "offset1") inst.offset1 = int32_t(parseInt(value, text));
        else if (key == "neg_lo") inst.negLo = parseBits(value, text);
        else if (key == "neg_hi") inst.negHi = parseBits(value, text);
        else if (key == "op_sel") inst.opSel = parseBits(value, text);
        else if (key == "op_sel_hi") {
            inst.opSelHi = parseBits(value, text);
            inst.opSelHiGiven = true;
        } else if (key == "mul") inst.omod = value == "2" ? 1 : 2;
        else if (key == "div") inst.omod = 3;
        else if (key == "scope" || key == "th" || key == "glc" || key == "slc" || key == "dlc" || key == "nv") {
            // cache policy: no effect on a simulated memory without caches
        } else bad(text, "modifier \"" + t + "\"");
    }
}

Handler bind(const std::string& mnemonic) {
    const auto& table = handlers();
    const auto it = table.find(baseMnemonic(mnemonic));
    return it == table.end() ? nullptr : it->second;
}

}  // namespace

std::string baseMnemonic(const std::string& mnemonic) {
    std::string m = mnemonic;
    for (const char* suffix : {"_e32", "_e64", "_dpp", "_sdwa"}) {
        const std::string s = suffix;
        if (m.size() > s.size() && m.compare(m.size() - s.size(), s.size(), s) == 0) m.resize(m.size() - s.size());
    }
    if (m.rfind("v_dual_", 0) == 0) m = "v_" + m.substr(7);
    return m;
}

bool implemented(const std::string& mnemonic) { return bind(mnemonic) != nullptr; }

std::shared_ptr<const Program> decodeProgram(const kernels::CodeObject& object) {
    auto program = std::make_shared<Program>();
    program->target = object.target();
    const std::vector<uint8_t> image = object.loadImage();
    const kernels::LoadSegment* code = nullptr;
    for (const kernels::LoadSegment& s : object.segments())
        if (s.flags & 1u) code = &s;
    if (!code) throw IsaError(object.origin() + " has no executable segment");
    program->textBase = code->vaddr;
    const std::vector<DisassembledLine> lines =
        disassemble(object.target(), image.data() + code->vaddr, size_t(code->memSize), code->vaddr);
    program->byOffset.assign(size_t((code->memSize + 3) / 4), -1);
    std::unordered_map<std::string, uint16_t> opcodeIds;
    auto opcodeId = [&](const std::string& m) {
        const std::string base = baseMnemonic(m);
        auto [it, fresh] = opcodeIds.emplace(base, uint16_t(program->opcodes.size()));
        if (fresh) {
            program->opcodes.push_back(base);
            program->opClass.push_back(classify(base));
        }
        return it->second;
    };
    for (const DisassembledLine& line : lines) {
        Inst inst;
        inst.index = uint32_t(program->insts.size());
        inst.address = line.address;
        inst.size = line.size ? line.size : 4;
        std::string text = line.size ? line.text : "<undecodable>";
        if (!line.size) {
            inst.opcode = opcodeId("<undecodable>");
            inst.run = missingHandler;
        } else if (const size_t dual = text.find(" :: "); dual != std::string::npos) {
            std::string mx, my;
            Inst x, y;
            parseInto(x, text.substr(0, dual), mx);
            parseInto(y, text.substr(dual + 4), my);
            x.run = bind(mx);
            y.run = bind(my);
            x.opcode = opcodeId(mx);
            y.opcode = opcodeId(my);
            if (!x.run) {
                x.run = missingHandler;
                program->missing.push_back(baseMnemonic(mx));
            }
            if (!y.run) {
                y.run = missingHandler;
                program->missing.push_back(baseMnemonic(my));
            }
            inst.pair = int32_t(program->dual.size());
            inst.opcode = x.opcode;
            inst.run = dualHandler;
            program->dual.push_back(x);
            program->dual.push_back(y);
        } else {
            std::string m;
            parseInto(inst, text, m);
            inst.opcode = opcodeId(m);
            inst.run = bind(m);
            if (!inst.run) {
                inst.run = missingHandler;
                program->missing.push_back(baseMnemonic(m));
            }
            if (m.rfind("s_branch", 0) == 0 || m.rfind("s_cbranch", 0) == 0) {
                if (inst.nops != 1) throw IsaError("cannot decode \"" + text + "\": branch without a distance");
                inst.simm = int32_t(int16_t(uint16_t(inst.op[0].value)));  // SOPP simm16, printed unsigned
            }
        }
        program->byOffset[size_t((line.address - code->vaddr) / 4)] = int32_t(inst.index);
        program->insts.push_back(inst);
        program->text.push_back(std::move(text));
    }
    for (Inst& inst : program->insts) {
        const std::string& m = program->opcodes[inst.opcode];
        if (m.rfind("s_branch", 0) == 0 || m.rfind("s_cbranch", 0) == 0) {
            inst.target = program->at(inst.address + 4 + int64_t(inst.simm) * 4);
            if (inst.target < 0) throw IsaError(program->text[inst.index] + " at " + std::to_string(inst.address) + " branches outside the code");
        }
    }
    std::sort(program->missing.begin(), program->missing.end());
    program->missing.erase(std::unique(program->missing.begin(), program->missing.end()), program->missing.end());
    return program;
}

}  // namespace zinc::kfd::isa
