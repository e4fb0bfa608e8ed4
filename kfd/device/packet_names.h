#pragma once
// The name and length a PM4 header claims, for queue-state reports. Only the header is read:
// the report must work on whatever garbage a hung ring holds.
#include <cstdint>
#include <string>

namespace zinc::kfd {

struct PacketShape {
    std::string name;     // "RELEASE_MEM", "type-3 opcode 0x99", "type-0 packet", ...
    uint32_t dwords = 1;  // header included
};

PacketShape packetShape(uint32_t header);

}  // namespace zinc::kfd
