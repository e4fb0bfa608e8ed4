#include "pm4/decoder.h"
#include "pm4/printf_string.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace zinc::pm4 {
namespace {

namespace H = gfx11::PM4_HEADER;  // identical on gfx12

std::string str(std::string_view s) { return std::string(s); }

DecodeError makeError(uint32_t offset, uint32_t header, Gfx gfx, std::string reason) {
    return {offset, header, packetName(header, gfx), std::move(reason)};
}

// A field value as a reader wants it: bits as 0/1, small fields in decimal, wide ones in hex,
// plus the value's name when the table has one.
std::string formatValue(const Field& f, uint32_t value) {
    std::string out = f.width <= 4 || value < 10 ? format("%u", value) : format("0x%X", value);
    if (f.valueNameCount > 0) {
        const std::string_view name = f.nameOf(value);
        if (!name.empty()) out += " (" + str(name) + ")";
        else if (f.valuesComplete) out += " (undefined)";
    }
    if (f.subfieldCount > 0 && value != 0) {
        out += " {";
        bool first = true;
        for (const Field& s : f.subs()) {
            const uint32_t v = s.get(value);
            if (v == 0) continue;
            out += first ? "" : " ";
            out += s.width == 1 ? str(s.name) : str(s.name) + "=" + format("%u", v);
            first = false;
        }
        out += "}";
    }
    return out;
}

std::string formatFields(std::span<const Field> fields, uint32_t dword, unsigned dwordIndex) {
    std::string out;
    for (const Field& f : fields) {
        if (f.dword != dwordIndex) continue;
        out += out.empty() ? "" : " ";
        out += str(f.name) + "=" + formatValue(f, f.get(dword));
    }
    return out;
}

// Notes about bits and values the tables say nothing about.
void addNotes(DecodedPacket& d, Gfx gfx) {
    const PacketView& v = d.view;
    const uint32_t headerReserved = v.header & 0xF8u;  // header bits 7:3 (PAL reserved1)
    if (v.type == 3 && headerReserved) d.notes.push_back(format("header: reserved bits 0x%02X set", headerReserved));
    if (!v.spec) return;
    uint32_t fixedDwords = 0;
    for (const Field& f : v.spec->fields) fixedDwords = std::max<uint32_t>(fixedDwords, f.dword);
    if (v.spec->opcode == Opcode::ACQUIRE_MEM) fixedDwords = 7;  // dword 1 is all reserved
    for (uint32_t i = 1; i <= fixedDwords && i < v.dwords; ++i) {
        const uint32_t reserved = v.dword(i) & ~coveredBits(v.spec->fields, i);
        if (reserved) d.notes.push_back(format("dword %u: reserved bits 0x%08X set", i, reserved));
    }
    for (const DecodedField& f : d.fields) {
        if (f.field->valueNameCount > 0 && f.field->valuesComplete && f.field->nameOf(f.value).empty())
            d.notes.push_back(format("%s=%u is not a value %s defines", str(f.name()).c_str(), f.value,
                                     str(gfxName(gfx)).c_str()));
        if (f.field->subfieldCount > 0) {
            const uint32_t unknown = f.value & ~coveredBits(f.field->subs(), 0);
            if (unknown)
                d.notes.push_back(format("%s: bits 0x%X are reserved on %s", str(f.name()).c_str(), unknown,
                                         str(gfxName(gfx)).c_str()));
        }
    }
}

}  // namespace

std::string DecodeError::describe() const {
    return format("dword %u (0x%X): %s, header 0x%08X: ", offset, offset, packet.c_str(), header) + reason;
}

HeaderInfo decodeHeader(uint32_t header) {
    HeaderInfo h;
    h.type = H::TYPE.get(header);
    h.count = H::COUNT.get(header);
    h.opcode = H::IT_OPCODE.get(header);
    if (h.type == 2) {
        h.dwords = 1;
    } else if (h.type == 3) {
        const bool headerOnlyNop = h.opcode == static_cast<uint32_t>(Opcode::NOP) && h.count == kNopCountHeaderOnly;
        h.dwords = headerOnlyNop ? 1 : h.count + 2;
    }
    return h;
}

std::string packetName(uint32_t header, Gfx gfx) {
    const HeaderInfo h = decodeHeader(header);
    if (h.type == 2) return "type-2 filler";
    if (h.type != 3) return format("type-%u packet", h.type);
    if (const PacketSpec* spec = findPacket(gfx, h.opcode)) return str(spec->name);
    const std::string_view other = otherOpcodeName(h.opcode);
    if (!other.empty()) return format("opcode 0x%02X (%s)", h.opcode, str(other).c_str());
    return format("opcode 0x%02X", h.opcode);
}

ParsedPacket parsePacket(std::span<const uint32_t> stream, uint32_t offset, Gfx gfx) {
    ParsedPacket out;
    PacketView& v = out.packet;
    v.offset = offset;
    if (offset >= stream.size()) {
        out.error = DecodeError{offset, 0, "end of stream", "no packet here: the stream ends first"};
        return out;
    }
    v.header = stream[offset];
    const HeaderInfo h = decodeHeader(v.header);
    v.type = h.type;
    if (h.type == 2) return out;  // one-dword filler
    if (h.type != 3) {
        out.error = makeError(offset, v.header, gfx,
                              format("bad packet type %u: a compute queue takes type-3 packets and type-2 fillers",
                                     h.type));
        return out;
    }
    v.spec = findPacket(gfx, h.opcode);
    if (!v.spec) {
        const bool known = !otherOpcodeName(h.opcode).empty();
        out.error = makeError(offset, v.header, gfx,
                              known ? format("opcode 0x%02X is not supported by zinc pm4", h.opcode)
                                    : format("unknown opcode 0x%02X", h.opcode));
        return out;
    }
    const uint64_t remaining = stream.size() - offset;
    if (h.dwords > remaining) {
        out.error = makeError(offset, v.header, gfx,
                              format("COUNT %u makes a %u-dword packet but only %u dwords remain in the stream",
                                     h.count, h.dwords, static_cast<uint32_t>(remaining)));
        return out;
    }
    v.dwords = h.dwords;
    v.body = stream.subspan(offset + 1, h.dwords - 1);
    const uint32_t body = h.dwords - 1;
    const bool headerOnlyNop = v.spec->opcode == Opcode::NOP && h.dwords == 1;
    if (!headerOnlyNop && (body < v.spec->minBody || body > v.spec->maxBody || body == 0)) {
        out.error = makeError(offset, v.header, gfx,
                              v.spec->minBody == v.spec->maxBody
                                  ? format("body of %u dwords; %s takes %u", body, str(v.spec->name).c_str(),
                                           v.spec->minBody)
                                  : format("body of %u dwords; %s takes %u to %u", body, str(v.spec->name).c_str(),
                                           std::max(1u, v.spec->minBody), v.spec->maxBody));
        return out;
    }
    if (v.spec->opcode == Opcode::EVENT_WRITE && body == 2) {
        out.error = makeError(offset, v.header, gfx, "EVENT_WRITE body is 1 dword, or 3 for SAMPLE_* events; got 2");
        return out;
    }
    if (v.spec->opcode == Opcode::SET_SH_REG) {
        const uint32_t first = gfx11::SET_SH_REG::REG_OFFSET.get(v.body[0]);
        const uint32_t values = body - 1;
        if (first + values > kShRegCount) {
            out.error = makeError(offset, v.header, gfx,
                                  format("SET_SH_REG writes registers 0x%X..0x%X, outside the SH range 0x%X..0x%X",
                                         kShRegStart + first, kShRegStart + first + values - 1, kShRegStart,
                                         kShRegEnd - 1));
            return out;
        }
    }
    return out;
}

std::optional<uint32_t> DecodedPacket::field(std::string_view name) const {
    for (const DecodedField& f : fields)
        if (f.name() == name) return f.value;
    for (const DecodedRegister& r : registers)
        if (r.reg && r.reg->name == name) return r.value;
    return std::nullopt;
}

DecodedPacket decodePacket(const PacketView& v, Gfx gfx) {
    DecodedPacket d;
    d.view = v;
    if (v.spec) {
        for (const Field& f : v.spec->fields)
            if (f.dword < v.dwords) d.fields.push_back({&f, v.get(f)});
        switch (v.spec->opcode) {
            case Opcode::SET_SH_REG: {
                const uint32_t first = kShRegStart + gfx11::SET_SH_REG::REG_OFFSET.get(v.body[0]);
                for (uint32_t i = 1; i < v.body.size(); ++i) {
                    const uint32_t address = first + i - 1;
                    d.registers.push_back({address, findRegister(gfx, address), v.body[i]});
                }
                break;
            }
            case Opcode::WRITE_DATA: d.data = v.body.subspan(3); break;
            case Opcode::NOP: d.data = v.body; break;
            default: break;
        }
    }
    addNotes(d, gfx);
    return d;
}

Decoded decode(std::span<const uint32_t> stream, Gfx gfx) {
    Decoded out;
    uint32_t offset = 0;
    while (offset < stream.size()) {
        ParsedPacket p = parsePacket(stream, offset, gfx);
        if (!p.ok()) {
            out.error = std::move(p.error);
            break;
        }
        out.packets.push_back(decodePacket(p.packet, gfx));
        offset += p.packet.dwords;
    }
    return out;
}

std::string formatPacket(const DecodedPacket& d, Gfx gfx) {
    const PacketView& v = d.view;
    std::string out = format("0x%04X  ", v.offset);
    if (v.type == 2) return out + format("TYPE2 filler 0x%08X\n", v.header);
    out += str(v.name()) + format("  header 0x%08X  [%u dwords]  ", v.header, v.dwords);
    out += formatFields(H::FIELDS, v.header, 0) + "\n";
    if (!v.spec) return out;
    for (uint32_t i = 1; i < v.dwords; ++i) {
        const std::string fields = formatFields(v.spec->fields, v.dword(i), i);
        const bool fixed = !fields.empty() || (v.spec->opcode == Opcode::ACQUIRE_MEM && i == 1);
        if (!fixed) break;  // the variable tail (values, data, payload) is printed below
        out += format("    dword %-2u 0x%08X  ", i, v.dword(i)) + (fields.empty() ? "reserved" : fields) + "\n";
    }
    for (const Field& lo : v.spec->fields) {
        const std::string_view name = lo.name;
        if (name.size() < 4 || name.substr(name.size() - 3) != "_LO" || lo.dword >= v.dwords) continue;
        for (const Field& hi : v.spec->fields) {
            if (hi.dword >= v.dwords || hi.name.size() != name.size() ||
                hi.name.substr(0, name.size() - 3) != name.substr(0, name.size() - 3) ||
                hi.name.substr(name.size() - 3) != "_HI")
                continue;
            const uint64_t value = uint64_t{v.get(hi)} << 32 | v.get(lo);
            out += "    " + str(name.substr(0, name.size() - 3)) + format(" = 0x%016" PRIX64 "\n", value);
        }
    }
    for (const DecodedRegister& r : d.registers) {
        const std::string name = r.reg ? str(r.reg->name) : format("SH_REG_0x%04X", r.address);
        out += format("    0x%04X %-34s = 0x%08X", r.address, name.c_str(), r.value);
        if (r.reg && r.reg->fieldCount > 0) out += "  " + formatFields(r.reg->fields(), r.value, 0);
        out += "\n";
    }
    if (v.spec->opcode == Opcode::NOP && !d.data.empty()) {
        out += format("    payload: %u dwords\n", static_cast<uint32_t>(d.data.size()));
    } else if (!d.data.empty()) {
        constexpr size_t kShown = 64;
        for (size_t i = 0; i < d.data.size() && i < kShown; ++i)
            out += format("    data[%zu] 0x%08X\n", i, d.data[i]);
        if (d.data.size() > kShown) out += format("    ... %zu more data dwords\n", d.data.size() - kShown);
    }
    for (const std::string& note : d.notes) out += "    note: " + note + "\n";
    (void)gfx;
    return out;
}

std::string formatStream(const Decoded& decoded, Gfx gfx) {
    std::string out;
    for (const DecodedPacket& p : decoded.packets) out += formatPacket(p, gfx);
    if (decoded.error) out += "error: " + decoded.error->describe() + "\n";
    return out;
}

}  // namespace zinc::pm4
