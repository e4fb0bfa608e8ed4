#pragma once
// The COMPUTE_* SH registers a compute dispatch programs, per generation, as constexpr data:
// absolute dword address, name and fields. SET_SH_REG writes them, the decoder names them, the
// executor reads them back out of its register file.
//
// Sources (FACTS.md §3, cross-checked):
//  - Linux drivers/gpu/drm/amd/include/asic_reg/gc/gc_11_0_0_offset.h and gc_11_0_0_sh_mask.h,
//    gc_12_0_0_offset.h and gc_12_0_0_sh_mask.h: regCOMPUTE_* offsets (BASE_IDX 0; absolute =
//    GC segment-0 base 0x1260 + offset) and field masks;
//  - PAL src/core/hw/gfxip/gfx9/chip/gfx9_plus_merged_offset.h / _registers.h (gfx11) and
//    gfx12/chip/gfx12_merged_offset.h / _registers.h: the same registers as absolute mmCOMPUTE_*
//    addresses; PAL gfx9ShadowedRegs.h lists the gfx11 compute SH ranges (0x2E04-0x2E09,
//    0x2E0B-0x2E0D, 0x2E10-0x2E13, 0x2E15, 0x2E18, 0x2E1E, 0x2E24-0x2E28, 0x2E2A, 0x2E2F,
//    0x2E40-0x2E4F, 0x2E7D);
//  - LLVM AMDHSAKernelDescriptor.h for the RSRC1 DEBUG_MODE / CDBG_USER bits on gfx11.
// gfx11 and gfx12 use identical addresses; gfx12 is written as gfx11 plus its differences: the
// registers whose fields changed, and the ones it drops (overlayRegisters()).
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "pm4/field.h"

namespace zinc::pm4 {

// The SH register window SET_SH_REG addresses: REG_OFFSET = absolute - start (Linux nvd.h
// PACKET3_SET_SH_REG_START / _END; Mesa sid.h SI_SH_REG_OFFSET 0xB000 bytes).
inline constexpr uint32_t kShRegStart = 0x2C00;
inline constexpr uint32_t kShRegEnd = 0x3000;  // exclusive
inline constexpr uint32_t kShRegCount = kShRegEnd - kShRegStart;

// A register field: a Field on dword 0, written [hi:lo].
constexpr Field bits(std::string_view name, unsigned hi, unsigned lo) { return Field(name, 0, hi, lo); }
constexpr Field bit(std::string_view name, unsigned b) { return Field(name, 0, b, b); }

struct Register {
    std::string_view name;
    uint32_t address = 0;  // absolute dword address
    const Field* fieldData = nullptr;
    uint16_t fieldCount = 0;

    constexpr Register() = default;
    constexpr Register(std::string_view n, uint32_t a) : name(n), address(a) {}
    template <size_t N>
    constexpr Register(std::string_view n, uint32_t a, const Field (&f)[N])
        : name(n), address(a), fieldData(f), fieldCount(static_cast<uint16_t>(N)) {}
    constexpr Register(std::string_view n, uint32_t a, std::span<const Field> f)  // a derived table (overlay())
        : name(n), address(a), fieldData(f.data()), fieldCount(static_cast<uint16_t>(f.size())) {}

    constexpr std::span<const Field> fields() const { return {fieldData, fieldCount}; }
    constexpr uint32_t shOffset() const { return address - kShRegStart; }
    constexpr bool inShRange() const { return address >= kShRegStart && address < kShRegEnd; }
    // A field by name, checked at compile time: COMPUTE_PGM_RSRC2.field("USER_SGPR")(n).
    consteval Field field(std::string_view fieldName) const { return fieldNamed(fields(), fieldName); }
};

namespace gfx11 {

inline constexpr Field COMPUTE_DISPATCH_INITIATOR_FIELDS[] = {
    bit("COMPUTE_SHADER_EN", 0),
    bit("PARTIAL_TG_EN", 1),
    bit("FORCE_START_AT_000", 2),
    bit("ORDERED_APPEND_ENBL", 3),
    bit("ORDERED_APPEND_MODE", 4),
    bit("USE_THREAD_DIMENSIONS", 5),
    bit("ORDER_MODE", 6),
    bit("SCALAR_L1_INV_VOL", 10),
    bit("VECTOR_L1_INV_VOL", 11),
    bit("TUNNEL_ENABLE", 13),
    bit("RESTORE", 14),
    bit("CS_W32_EN", 15),
    bit("AMP_SHADER_EN", 16),
    bit("DISABLE_DISP_PREMPT_EN", 17),
};
inline constexpr Field COMPUTE_NUM_THREAD_XY_FIELDS[] = {
    bits("NUM_THREAD_FULL", 15, 0),
    bits("NUM_THREAD_PARTIAL", 31, 16),
};
inline constexpr Field COMPUTE_NUM_THREAD_Z_FIELDS[] = {
    bits("NUM_THREAD_FULL", 15, 0),
    bits("NUM_THREAD_PARTIAL", 31, 16),
};
inline constexpr Field COMPUTE_PGM_HI_FIELDS[] = {bits("DATA", 7, 0)};
inline constexpr Field COMPUTE_PGM_RSRC1_FIELDS[] = {
    bits("VGPRS", 5, 0),
    bits("SGPRS", 9, 6),
    bits("PRIORITY", 11, 10),
    bits("FLOAT_MODE", 19, 12),
    bit("PRIV", 20),
    bit("DX10_CLAMP", 21),
    bit("DEBUG_MODE", 22),  // LLVM-KD name; not in the gc_11 mask header
    bit("IEEE_MODE", 23),
    bit("BULKY", 24),
    bit("CDBG_USER", 25),  // LLVM-KD name; not in the gc_11 mask header
    bit("FP16_OVFL", 26),
    bit("WGP_MODE", 29),
    bit("MEM_ORDERED", 30),
    bit("FWD_PROGRESS", 31),
};
inline constexpr Field COMPUTE_PGM_RSRC2_FIELDS[] = {
    bit("SCRATCH_EN", 0),
    bits("USER_SGPR", 5, 1),
    bit("TRAP_PRESENT", 6),
    bit("TGID_X_EN", 7),
    bit("TGID_Y_EN", 8),
    bit("TGID_Z_EN", 9),
    bit("TG_SIZE_EN", 10),
    bits("TIDIG_COMP_CNT", 12, 11),
    bits("EXCP_EN_MSB", 14, 13),
    bits("LDS_SIZE", 23, 15),  // 128-dword (512-byte) granules (LLVM AMDGPUUsage)
    bits("EXCP_EN", 30, 24),
};
inline constexpr Field COMPUTE_PGM_RSRC3_FIELDS[] = {
    bits("SHARED_VGPR_CNT", 3, 0),
    bits("INST_PREF_SIZE", 9, 4),
    bit("TRAP_ON_START", 10),
    bit("TRAP_ON_END", 11),
    bit("IMAGE_OP", 31),
};
inline constexpr Field COMPUTE_VMID_FIELDS[] = {bits("DATA", 3, 0)};
inline constexpr Field COMPUTE_RESOURCE_LIMITS_FIELDS[] = {
    bits("WAVES_PER_SH", 9, 0),
    bits("TG_PER_CU", 15, 12),
    bits("LOCK_THRESHOLD", 21, 16),
    bit("SIMD_DEST_CNTL", 22),
    bit("FORCE_SIMD_DIST", 23),
    bits("CU_GROUP_COUNT", 26, 24),
};
inline constexpr Field COMPUTE_STATIC_THREAD_MGMT_FIELDS[] = {
    bits("SA0_CU_EN", 15, 0),
    bits("SA1_CU_EN", 31, 16),
};
inline constexpr Field COMPUTE_TMPRING_SIZE_FIELDS[] = {
    bits("WAVES", 11, 0),
    bits("WAVESIZE", 26, 12),  // 256-byte units per wave on gfx11+ (Mesa ac_gpu_info.c)
};
inline constexpr Field COMPUTE_DISPATCH_INTERLEAVE_FIELDS[] = {bits("INTERLEAVE", 9, 0)};

inline constexpr Register COMPUTE_DISPATCH_INITIATOR{"COMPUTE_DISPATCH_INITIATOR", 0x2E00,
                                                     COMPUTE_DISPATCH_INITIATOR_FIELDS};
inline constexpr Register COMPUTE_DIM_X{"COMPUTE_DIM_X", 0x2E01};
inline constexpr Register COMPUTE_DIM_Y{"COMPUTE_DIM_Y", 0x2E02};
inline constexpr Register COMPUTE_DIM_Z{"COMPUTE_DIM_Z", 0x2E03};
inline constexpr Register COMPUTE_START_X{"COMPUTE_START_X", 0x2E04};
inline constexpr Register COMPUTE_START_Y{"COMPUTE_START_Y", 0x2E05};
inline constexpr Register COMPUTE_START_Z{"COMPUTE_START_Z", 0x2E06};
inline constexpr Register COMPUTE_NUM_THREAD_X{"COMPUTE_NUM_THREAD_X", 0x2E07, COMPUTE_NUM_THREAD_XY_FIELDS};
inline constexpr Register COMPUTE_NUM_THREAD_Y{"COMPUTE_NUM_THREAD_Y", 0x2E08, COMPUTE_NUM_THREAD_XY_FIELDS};
inline constexpr Register COMPUTE_NUM_THREAD_Z{"COMPUTE_NUM_THREAD_Z", 0x2E09, COMPUTE_NUM_THREAD_Z_FIELDS};
inline constexpr Register COMPUTE_PIPELINESTAT_ENABLE{"COMPUTE_PIPELINESTAT_ENABLE", 0x2E0A};
inline constexpr Register COMPUTE_PERFCOUNT_ENABLE{"COMPUTE_PERFCOUNT_ENABLE", 0x2E0B};
inline constexpr Register COMPUTE_PGM_LO{"COMPUTE_PGM_LO", 0x2E0C};  // entry address >> 8
inline constexpr Register COMPUTE_PGM_HI{"COMPUTE_PGM_HI", 0x2E0D, COMPUTE_PGM_HI_FIELDS};  // address >> 40
inline constexpr Register COMPUTE_DISPATCH_PKT_ADDR_LO{"COMPUTE_DISPATCH_PKT_ADDR_LO", 0x2E0E};
inline constexpr Register COMPUTE_DISPATCH_PKT_ADDR_HI{"COMPUTE_DISPATCH_PKT_ADDR_HI", 0x2E0F};
inline constexpr Register COMPUTE_DISPATCH_SCRATCH_BASE_LO{"COMPUTE_DISPATCH_SCRATCH_BASE_LO", 0x2E10};  // >> 8
inline constexpr Register COMPUTE_DISPATCH_SCRATCH_BASE_HI{"COMPUTE_DISPATCH_SCRATCH_BASE_HI", 0x2E11};  // >> 40
inline constexpr Register COMPUTE_PGM_RSRC1{"COMPUTE_PGM_RSRC1", 0x2E12, COMPUTE_PGM_RSRC1_FIELDS};
inline constexpr Register COMPUTE_PGM_RSRC2{"COMPUTE_PGM_RSRC2", 0x2E13, COMPUTE_PGM_RSRC2_FIELDS};
inline constexpr Register COMPUTE_VMID{"COMPUTE_VMID", 0x2E14, COMPUTE_VMID_FIELDS};
inline constexpr Register COMPUTE_RESOURCE_LIMITS{"COMPUTE_RESOURCE_LIMITS", 0x2E15,
                                                  COMPUTE_RESOURCE_LIMITS_FIELDS};
inline constexpr Register COMPUTE_STATIC_THREAD_MGMT_SE0{"COMPUTE_STATIC_THREAD_MGMT_SE0", 0x2E16,
                                                         COMPUTE_STATIC_THREAD_MGMT_FIELDS};
inline constexpr Register COMPUTE_STATIC_THREAD_MGMT_SE1{"COMPUTE_STATIC_THREAD_MGMT_SE1", 0x2E17,
                                                         COMPUTE_STATIC_THREAD_MGMT_FIELDS};
inline constexpr Register COMPUTE_TMPRING_SIZE{"COMPUTE_TMPRING_SIZE", 0x2E18, COMPUTE_TMPRING_SIZE_FIELDS};
inline constexpr Register COMPUTE_STATIC_THREAD_MGMT_SE2{"COMPUTE_STATIC_THREAD_MGMT_SE2", 0x2E19,
                                                         COMPUTE_STATIC_THREAD_MGMT_FIELDS};
inline constexpr Register COMPUTE_STATIC_THREAD_MGMT_SE3{"COMPUTE_STATIC_THREAD_MGMT_SE3", 0x2E1A,
                                                         COMPUTE_STATIC_THREAD_MGMT_FIELDS};
inline constexpr Register COMPUTE_RESTART_X{"COMPUTE_RESTART_X", 0x2E1B};
inline constexpr Register COMPUTE_RESTART_Y{"COMPUTE_RESTART_Y", 0x2E1C};
inline constexpr Register COMPUTE_RESTART_Z{"COMPUTE_RESTART_Z", 0x2E1D};
inline constexpr Register COMPUTE_THREAD_TRACE_ENABLE{"COMPUTE_THREAD_TRACE_ENABLE", 0x2E1E};  // PAL only
inline constexpr Register COMPUTE_DISPATCH_ID{"COMPUTE_DISPATCH_ID", 0x2E20};
inline constexpr Register COMPUTE_THREADGROUP_ID{"COMPUTE_THREADGROUP_ID", 0x2E21};
inline constexpr Register COMPUTE_REQ_CTRL{"COMPUTE_REQ_CTRL", 0x2E22};
inline constexpr Register COMPUTE_USER_ACCUM_0{"COMPUTE_USER_ACCUM_0", 0x2E24};  // PAL shadow range only
inline constexpr Register COMPUTE_USER_ACCUM_1{"COMPUTE_USER_ACCUM_1", 0x2E25};
inline constexpr Register COMPUTE_USER_ACCUM_2{"COMPUTE_USER_ACCUM_2", 0x2E26};
inline constexpr Register COMPUTE_USER_ACCUM_3{"COMPUTE_USER_ACCUM_3", 0x2E27};
inline constexpr Register COMPUTE_PGM_RSRC3{"COMPUTE_PGM_RSRC3", 0x2E28, COMPUTE_PGM_RSRC3_FIELDS};
inline constexpr Register COMPUTE_SHADER_CHKSUM{"COMPUTE_SHADER_CHKSUM", 0x2E2A};
inline constexpr Register COMPUTE_STATIC_THREAD_MGMT_SE4{"COMPUTE_STATIC_THREAD_MGMT_SE4", 0x2E2B,
                                                         COMPUTE_STATIC_THREAD_MGMT_FIELDS};
inline constexpr Register COMPUTE_STATIC_THREAD_MGMT_SE5{"COMPUTE_STATIC_THREAD_MGMT_SE5", 0x2E2C,
                                                         COMPUTE_STATIC_THREAD_MGMT_FIELDS};
inline constexpr Register COMPUTE_STATIC_THREAD_MGMT_SE6{"COMPUTE_STATIC_THREAD_MGMT_SE6", 0x2E2D,
                                                         COMPUTE_STATIC_THREAD_MGMT_FIELDS};
inline constexpr Register COMPUTE_STATIC_THREAD_MGMT_SE7{"COMPUTE_STATIC_THREAD_MGMT_SE7", 0x2E2E,
                                                         COMPUTE_STATIC_THREAD_MGMT_FIELDS};
inline constexpr Register COMPUTE_DISPATCH_INTERLEAVE{"COMPUTE_DISPATCH_INTERLEAVE", 0x2E2F,
                                                      COMPUTE_DISPATCH_INTERLEAVE_FIELDS};
// User SGPRs s0.. of every wave: RSRC2.USER_SGPR of them are loaded from here.
inline constexpr Register COMPUTE_USER_DATA_0{"COMPUTE_USER_DATA_0", 0x2E40};
inline constexpr Register COMPUTE_USER_DATA_1{"COMPUTE_USER_DATA_1", 0x2E41};
inline constexpr Register COMPUTE_USER_DATA_2{"COMPUTE_USER_DATA_2", 0x2E42};
inline constexpr Register COMPUTE_USER_DATA_3{"COMPUTE_USER_DATA_3", 0x2E43};
inline constexpr Register COMPUTE_USER_DATA_4{"COMPUTE_USER_DATA_4", 0x2E44};
inline constexpr Register COMPUTE_USER_DATA_5{"COMPUTE_USER_DATA_5", 0x2E45};
inline constexpr Register COMPUTE_USER_DATA_6{"COMPUTE_USER_DATA_6", 0x2E46};
inline constexpr Register COMPUTE_USER_DATA_7{"COMPUTE_USER_DATA_7", 0x2E47};
inline constexpr Register COMPUTE_USER_DATA_8{"COMPUTE_USER_DATA_8", 0x2E48};
inline constexpr Register COMPUTE_USER_DATA_9{"COMPUTE_USER_DATA_9", 0x2E49};
inline constexpr Register COMPUTE_USER_DATA_10{"COMPUTE_USER_DATA_10", 0x2E4A};
inline constexpr Register COMPUTE_USER_DATA_11{"COMPUTE_USER_DATA_11", 0x2E4B};
inline constexpr Register COMPUTE_USER_DATA_12{"COMPUTE_USER_DATA_12", 0x2E4C};
inline constexpr Register COMPUTE_USER_DATA_13{"COMPUTE_USER_DATA_13", 0x2E4D};
inline constexpr Register COMPUTE_USER_DATA_14{"COMPUTE_USER_DATA_14", 0x2E4E};
inline constexpr Register COMPUTE_USER_DATA_15{"COMPUTE_USER_DATA_15", 0x2E4F};
inline constexpr Register COMPUTE_DISPATCH_TUNNEL{"COMPUTE_DISPATCH_TUNNEL", 0x2E7D};

inline constexpr Register COMPUTE_REGISTERS[] = {
    COMPUTE_DISPATCH_INITIATOR, COMPUTE_DIM_X, COMPUTE_DIM_Y, COMPUTE_DIM_Z,
    COMPUTE_START_X, COMPUTE_START_Y, COMPUTE_START_Z,
    COMPUTE_NUM_THREAD_X, COMPUTE_NUM_THREAD_Y, COMPUTE_NUM_THREAD_Z,
    COMPUTE_PIPELINESTAT_ENABLE, COMPUTE_PERFCOUNT_ENABLE, COMPUTE_PGM_LO, COMPUTE_PGM_HI,
    COMPUTE_DISPATCH_PKT_ADDR_LO, COMPUTE_DISPATCH_PKT_ADDR_HI,
    COMPUTE_DISPATCH_SCRATCH_BASE_LO, COMPUTE_DISPATCH_SCRATCH_BASE_HI,
    COMPUTE_PGM_RSRC1, COMPUTE_PGM_RSRC2, COMPUTE_VMID, COMPUTE_RESOURCE_LIMITS,
    COMPUTE_STATIC_THREAD_MGMT_SE0, COMPUTE_STATIC_THREAD_MGMT_SE1, COMPUTE_TMPRING_SIZE,
    COMPUTE_STATIC_THREAD_MGMT_SE2, COMPUTE_STATIC_THREAD_MGMT_SE3,
    COMPUTE_RESTART_X, COMPUTE_RESTART_Y, COMPUTE_RESTART_Z, COMPUTE_THREAD_TRACE_ENABLE,
    COMPUTE_DISPATCH_ID, COMPUTE_THREADGROUP_ID, COMPUTE_REQ_CTRL,
    COMPUTE_USER_ACCUM_0, COMPUTE_USER_ACCUM_1, COMPUTE_USER_ACCUM_2, COMPUTE_USER_ACCUM_3,
    COMPUTE_PGM_RSRC3, COMPUTE_SHADER_CHKSUM,
    COMPUTE_STATIC_THREAD_MGMT_SE4, COMPUTE_STATIC_THREAD_MGMT_SE5,
    COMPUTE_STATIC_THREAD_MGMT_SE6, COMPUTE_STATIC_THREAD_MGMT_SE7, COMPUTE_DISPATCH_INTERLEAVE,
    COMPUTE_USER_DATA_0, COMPUTE_USER_DATA_1, COMPUTE_USER_DATA_2, COMPUTE_USER_DATA_3,
    COMPUTE_USER_DATA_4, COMPUTE_USER_DATA_5, COMPUTE_USER_DATA_6, COMPUTE_USER_DATA_7,
    COMPUTE_USER_DATA_8, COMPUTE_USER_DATA_9, COMPUTE_USER_DATA_10, COMPUTE_USER_DATA_11,
    COMPUTE_USER_DATA_12, COMPUTE_USER_DATA_13, COMPUTE_USER_DATA_14, COMPUTE_USER_DATA_15,
    COMPUTE_DISPATCH_TUNNEL,
};

}  // namespace gfx11

// A later generation's register table: `base` with each register of `changes` in place of the
// one at its address, less the registers at `dropped` addresses.
template <size_t B, size_t C>
constexpr DerivedTable<Register, B> overlayRegisters(const Register (&base)[B], const Register (&changes)[C],
                                                     std::initializer_list<uint32_t> dropped = {}) {
    DerivedTable<Register, B> t;
    for (const Register& r : base) {
        bool keep = true;
        for (uint32_t address : dropped) keep = keep && address != r.address;
        if (!keep) continue;
        t.items[t.count] = r;
        for (const Register& c : changes)
            if (c.address == r.address) t.items[t.count] = c;
        ++t.count;
    }
    return t;
}

namespace gfx12 {

// Every register not defined here is gfx11's: same address, same fields in gc_12_0_0 and PAL
// gfx12_merged_registers.h.
using namespace gfx11;

// Field lists: gfx11's with the bits that gfx12 adds, renames or widens (gc_12_0_0_sh_mask.h,
// PAL gfx12_merged_registers.h).
inline constexpr Field DISPATCH_INITIATOR_CHANGES[] = {
    bit("PING_PONG_EN", 12),
    bit("INTERLEAVE_2D_EN", 18),
    bit("WGS_DISPATCH", 19),  // PAL only
    bits("TTRACE_QUEUE_ID", 31, 29),
};
inline constexpr auto COMPUTE_DISPATCH_INITIATOR_FIELDS =
    overlay(gfx11::COMPUTE_DISPATCH_INITIATOR_FIELDS, DISPATCH_INITIATOR_CHANGES);
// gfx12 narrows NUM_THREAD_FULL to 13 bits and adds interleave bits (gc_12_0_0_sh_mask.h; one source).
inline constexpr Field NUM_THREAD_X_CHANGES[] = {bits("NUM_THREAD_FULL", 12, 0), bits("INTERLEAVE_BITS_X", 15, 13)};
inline constexpr Field NUM_THREAD_Y_CHANGES[] = {bits("NUM_THREAD_FULL", 12, 0), bits("INTERLEAVE_BITS_Y", 15, 13)};
inline constexpr auto COMPUTE_NUM_THREAD_X_FIELDS = overlay(gfx11::COMPUTE_NUM_THREAD_XY_FIELDS, NUM_THREAD_X_CHANGES);
inline constexpr auto COMPUTE_NUM_THREAD_Y_FIELDS = overlay(gfx11::COMPUTE_NUM_THREAD_XY_FIELDS, NUM_THREAD_Y_CHANGES);
inline constexpr Field PGM_RSRC1_CHANGES[] = {bit("WG_RR_EN", 21), bit("DISABLE_PERF", 23)};  // for DX10_CLAMP, IEEE_MODE
inline constexpr auto COMPUTE_PGM_RSRC1_FIELDS = overlay(gfx11::COMPUTE_PGM_RSRC1_FIELDS, PGM_RSRC1_CHANGES);
inline constexpr Field PGM_RSRC2_CHANGES[] = {bit("DYNAMIC_VGPR", 6), bit("WGP_TAKEOVER", 31)};  // for TRAP_PRESENT
inline constexpr auto COMPUTE_PGM_RSRC2_FIELDS = overlay(gfx11::COMPUTE_PGM_RSRC2_FIELDS, PGM_RSRC2_CHANGES);
// SHARED_VGPR_CNT [3:0] stays, though LLVM-KD calls it reserved on gfx12 (FACTS.md §8).
inline constexpr Field PGM_RSRC3_CHANGES[] = {bits("INST_PREF_SIZE", 11, 4), bit("GLG_EN", 13)};  // for TRAP_ON_*
inline constexpr auto COMPUTE_PGM_RSRC3_FIELDS = overlay(gfx11::COMPUTE_PGM_RSRC3_FIELDS, PGM_RSRC3_CHANGES);
inline constexpr Field TMPRING_SIZE_CHANGES[] = {bits("WAVESIZE", 29, 12)};
inline constexpr auto COMPUTE_TMPRING_SIZE_FIELDS = overlay(gfx11::COMPUTE_TMPRING_SIZE_FIELDS, TMPRING_SIZE_CHANGES);
inline constexpr Field DISPATCH_INTERLEAVE_CHANGES[] = {
    bits("INTERLEAVE_1D", 9, 0),
    bits("INTERLEAVE_2D_X_SIZE", 19, 16),
    bits("INTERLEAVE_2D_Y_SIZE", 27, 24),
};
inline constexpr auto COMPUTE_DISPATCH_INTERLEAVE_FIELDS =
    overlay(gfx11::COMPUTE_DISPATCH_INTERLEAVE_FIELDS, DISPATCH_INTERLEAVE_CHANGES);

inline constexpr Register COMPUTE_DISPATCH_INITIATOR{"COMPUTE_DISPATCH_INITIATOR", 0x2E00,
                                                     COMPUTE_DISPATCH_INITIATOR_FIELDS};
inline constexpr Register COMPUTE_NUM_THREAD_X{"COMPUTE_NUM_THREAD_X", 0x2E07, COMPUTE_NUM_THREAD_X_FIELDS};
inline constexpr Register COMPUTE_NUM_THREAD_Y{"COMPUTE_NUM_THREAD_Y", 0x2E08, COMPUTE_NUM_THREAD_Y_FIELDS};
inline constexpr Register COMPUTE_PGM_RSRC1{"COMPUTE_PGM_RSRC1", 0x2E12, COMPUTE_PGM_RSRC1_FIELDS};
inline constexpr Register COMPUTE_PGM_RSRC2{"COMPUTE_PGM_RSRC2", 0x2E13, COMPUTE_PGM_RSRC2_FIELDS};
inline constexpr Register COMPUTE_TMPRING_SIZE{"COMPUTE_TMPRING_SIZE", 0x2E18, COMPUTE_TMPRING_SIZE_FIELDS};
inline constexpr Register COMPUTE_PGM_RSRC3{"COMPUTE_PGM_RSRC3", 0x2E28, COMPUTE_PGM_RSRC3_FIELDS};
inline constexpr Register COMPUTE_DISPATCH_INTERLEAVE{"COMPUTE_DISPATCH_INTERLEAVE", 0x2E2F,
                                                      COMPUTE_DISPATCH_INTERLEAVE_FIELDS};

inline constexpr Register CHANGED_REGISTERS[] = {
    COMPUTE_DISPATCH_INITIATOR, COMPUTE_NUM_THREAD_X, COMPUTE_NUM_THREAD_Y, COMPUTE_PGM_RSRC1,
    COMPUTE_PGM_RSRC2, COMPUTE_TMPRING_SIZE, COMPUTE_PGM_RSRC3, COMPUTE_DISPATCH_INTERLEAVE,
};
// No THREAD_TRACE_ENABLE / USER_ACCUM_*: only PAL's gfx11 shadow list names them.
inline constexpr auto COMPUTE_REGISTERS = overlayRegisters(
    gfx11::COMPUTE_REGISTERS, CHANGED_REGISTERS,
    {gfx11::COMPUTE_THREAD_TRACE_ENABLE.address, gfx11::COMPUTE_USER_ACCUM_0.address, gfx11::COMPUTE_USER_ACCUM_1.address,
     gfx11::COMPUTE_USER_ACCUM_2.address, gfx11::COMPUTE_USER_ACCUM_3.address});

}  // namespace gfx12

// The COMPUTE_* table of a generation, sorted by address.
constexpr std::span<const Register> computeRegisters(Gfx gfx) {
    if (gfx == Gfx::Gfx11) return gfx11::COMPUTE_REGISTERS;
    return gfx12::COMPUTE_REGISTERS;
}

// The register at an absolute dword address, or nullptr when the table does not name it.
constexpr const Register* findRegister(Gfx gfx, uint32_t address) {
    for (const Register& r : computeRegisters(gfx))
        if (r.address == address) return &r;
    return nullptr;
}

}  // namespace zinc::pm4
