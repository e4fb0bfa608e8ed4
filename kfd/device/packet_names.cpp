#include "kfd/device/packet_names.h"

#include "pm4/decoder.h"

namespace zinc::kfd {

PacketShape packetShape(uint32_t header) {
    // The header layout and the opcodes are the same on gfx11 and gfx12 (FACTS.md §1-§2), so the
    // gfx11 names serve both.
    const pm4::HeaderInfo info = pm4::decodeHeader(header);
    PacketShape shape;
    shape.name = pm4::packetName(header, pm4::Gfx::Gfx11);
    shape.dwords = info.dwords ? info.dwords : 1;
    return shape;
}

}  // namespace zinc::kfd
