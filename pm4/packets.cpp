#include "pm4/packets.h"

namespace zinc::pm4 {

std::string_view otherOpcodeName(uint32_t opcode) {
    // Opcodes seen in nvd.h, Mesa sid.h and PAL gfx12_merged_pm4_it_opcodes.h (FACTS.md §2) that
    // a compute queue may meet but this library neither builds nor executes.
    struct Entry {
        uint32_t opcode;
        std::string_view name;
    };
    static constexpr Entry kOthers[] = {
        {0x11, "SET_BASE"},
        {0x1E, "ATOMIC_MEM"},
        {0x23, "PRED_EXEC"},
        {0x5C, "INDIRECT_BUFFER_PASID"},
        {0x5F, "LOAD_SH_REG"},
        {0x63, "LOAD_SH_REG_INDEX"},
        {0x77, "SET_SH_REG_OFFSET"},
        {0x79, "SET_UCONFIG_REG"},
        {0x93, "WAIT_REG_MEM64"},
        {0x95, "HDP_FLUSH"},
        {0x98, "INVALIDATE_TLBS"},
        {0x9B, "SET_SH_REG_INDEX"},
        {0xA7, "DISPATCH_DIRECT_INTERLEAVED"},
        {0xA8, "DISPATCH_INDIRECT_INTERLEAVED"},
        {0xBA, "SET_SH_REG_PAIRS"},
        {0xBE, "SET_UCONFIG_REG_PAIRS"},
    };
    for (const Entry& e : kOthers)
        if (e.opcode == opcode) return e.name;
    return {};
}

}  // namespace zinc::pm4
