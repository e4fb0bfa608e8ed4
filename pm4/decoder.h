#pragma once
// Reading PM4 streams back: a structural parser shared with the executor, a decoder that names
// every field and register from the same tables the builder writes with, and a text formatter
// (`zinc-rt pm4 decode`). Malformed input is reported as a value naming the dword offset and the
// packet; nothing here reads outside the span it is given, and nothing follows an address.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pm4/field.h"
#include "pm4/packets.h"
#include "pm4/registers.h"

namespace zinc::pm4 {

struct DecodeError {
    uint32_t offset = 0;  // dword offset of the packet's header
    uint32_t header = 0;
    std::string packet;   // what the header says it is: "RELEASE_MEM", "type-0 packet", ...
    std::string reason;
    // "dword 12 (0x0000000c): RELEASE_MEM, header 0xC0064900: <reason>"
    std::string describe() const;
};

// What a header says, before the body is looked at.
struct HeaderInfo {
    uint32_t type = 0;
    uint32_t count = 0;
    uint32_t opcode = 0;
    uint32_t dwords = 0;  // total packet length including the header
};
HeaderInfo decodeHeader(uint32_t header);
// "SET_SH_REG", "opcode 0x79 (SET_UCONFIG_REG, not supported)", "type-2 filler", "type-0 packet".
std::string packetName(uint32_t header, Gfx gfx);

// One packet inside a stream. body holds the dwords after the header.
struct PacketView {
    uint32_t offset = 0;
    uint32_t header = 0;
    uint32_t type = 3;
    uint32_t dwords = 1;
    const PacketSpec* spec = nullptr;  // null for the type-2 filler
    std::span<const uint32_t> body;

    uint32_t opcode() const { return (header >> 8) & 0xFF; }
    std::string_view name() const { return spec ? spec->name : std::string_view("TYPE2"); }
    uint32_t dword(uint32_t index) const { return index == 0 ? header : body[index - 1]; }
    uint32_t get(const Field& field) const { return field.get(dword(field.dword)); }
    // lo/hi dword pair as one 64-bit value.
    uint64_t get64(const Field& lo, const Field& hi) const { return uint64_t{get(hi)} << 32 | get(lo); }
};

struct ParsedPacket {
    PacketView packet;
    std::optional<DecodeError> error;
    bool ok() const { return !error; }
};
// Reads the packet at `offset` and checks its structure: the packet type, COUNT against the end
// of `stream`, a supported opcode, a body length the packet allows, and SET_SH_REG staying in the
// SH register range.
ParsedPacket parsePacket(std::span<const uint32_t> stream, uint32_t offset, Gfx gfx);

// A decoded packet: every field of its fixed dwords by name, SET_SH_REG values by register, the
// WRITE_DATA data / NOP payload, and notes (reserved bits set, values undefined on this gfx).
struct DecodedField {
    const Field* field = nullptr;
    uint32_t value = 0;
    std::string_view name() const { return field->name; }
};
struct DecodedRegister {
    uint32_t address = 0;
    const Register* reg = nullptr;  // null when the table does not name that SH register
    uint32_t value = 0;
};
struct DecodedPacket {
    PacketView view;
    std::vector<DecodedField> fields;
    std::vector<DecodedRegister> registers;
    std::span<const uint32_t> data;
    std::vector<std::string> notes;

    // The value of a named field (tests); nullopt when the packet has none of that name.
    std::optional<uint32_t> field(std::string_view name) const;
};

struct Decoded {
    std::vector<DecodedPacket> packets;
    std::optional<DecodeError> error;  // the first structural error; decoding stops there
};
Decoded decode(std::span<const uint32_t> stream, Gfx gfx);
DecodedPacket decodePacket(const PacketView& packet, Gfx gfx);

// Text, one block per packet: offset, header, each dword with its fields, registers by name.
std::string formatPacket(const DecodedPacket& packet, Gfx gfx);
// The whole stream; a structural error ends it with a line "error: <describe()>".
std::string formatStream(const Decoded& decoded, Gfx gfx);

}  // namespace zinc::pm4
