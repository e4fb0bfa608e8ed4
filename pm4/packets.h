#pragma once
// PM4 type-3 packets of a compute (MEC) queue on gfx11 and gfx12: opcodes, the header, and every
// body dword's fields as constexpr tables. The builder (stream.h) encodes with these Fields, the
// decoder (decoder.h) prints with the same tables, the executor reads with them.
//
// Sources (FACTS.md §1-§2, cross-checked):
//  - Linux drivers/gpu/drm/amd/amdgpu/nvd.h: header macros (PACKET3, CP_PACKET_GET_*), opcodes,
//    RELEASE_MEM / WAIT_REG_MEM / WRITE_DATA / INDIRECT_BUFFER bit macros;
//  - Linux soc15d.h: INDIRECT_BUFFER, COPY_DATA, EVENT_WRITE, SET_SH_REG field macros;
//  - PAL src/core/hw/gfxip/gfx9/chip/gfx9_plus_merged_f32_mec_pm4_packets.h (gfx11 MEC layouts)
//    and gfx12/chip/gfx12_merged_f32_mec_pm4_packets.h (gfx12 MEC layouts, read at PAL 04bc1e7):
//    PM4_MEC_* structs, *_SIZEDW__CORE sizes and value enums;
//  - VGT_EVENT_TYPE values: PAL *_merged_enum.h.
// gfx12 is written as gfx11 plus its differences: it defines only the fields that differ and
// derives each packet's field list and the packet table from gfx11's; where only the name
// differs (gfx11 CACHE_POLICY, gfx12 TEMPORAL) the bits are the same.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "pm4/field.h"
#include "pm4/registers.h"

namespace zinc::pm4 {

// IT_OPCODE values (nvd.h PACKET3_*, PAL IT_*); the same on gfx11 and gfx12.
enum class Opcode : uint8_t {
    NOP = 0x10,
    COND_EXEC = 0x22,
    DISPATCH_DIRECT = 0x15,
    DISPATCH_INDIRECT = 0x16,
    WRITE_DATA = 0x37,
    WAIT_REG_MEM = 0x3C,
    INDIRECT_BUFFER = 0x3F,
    COPY_DATA = 0x40,
    EVENT_WRITE = 0x46,
    RELEASE_MEM = 0x49,
    DMA_DATA = 0x50,
    ACQUIRE_MEM = 0x58,
    SET_SH_REG = 0x76,
};

// A header-only NOP: COUNT = 0x3FFF means "this dword alone" (PAL BuildNop, Mesa PKT3_NOP_PAD,
// Linux gfx10+ insert_nop).
inline constexpr uint32_t kNopCountHeaderOnly = 0x3FFF;
// A type-2 packet is a one-dword filler (nvd.h CP_PACKET2); bits 29:0 are ignored.
inline constexpr uint32_t kType2Filler = 0x80000000u;
// COUNT is 14 bits: a body holds at most 0x4000 dwords.
inline constexpr uint32_t kMaxBodyDwords = 0x4000;

namespace gfx11 {

// ---- Type-3 header (dword 0) ----
namespace PM4_HEADER {
inline constexpr Field PREDICATE{"PREDICATE", 0, 0, 0};
inline constexpr ValueName SHADER_TYPE_VALUES[] = {{0, "GRAPHICS"}, {1, "COMPUTE"}};
inline constexpr Field SHADER_TYPE = Field("SHADER_TYPE", 0, 1, 1).withValues(SHADER_TYPE_VALUES);
inline constexpr Field RESET_FILTER_CAM{"RESET_FILTER_CAM", 0, 2, 2};
inline constexpr Field IT_OPCODE{"IT_OPCODE", 0, 15, 8};
inline constexpr Field COUNT{"COUNT", 0, 29, 16};
inline constexpr Field TYPE{"TYPE", 0, 31, 30};
inline constexpr Field FIELDS[] = {TYPE, COUNT, IT_OPCODE, RESET_FILTER_CAM, SHADER_TYPE, PREDICATE};
}  // namespace PM4_HEADER

// ---- VGT_EVENT_TYPE values used by compute queues (PAL *_merged_enum.h) ----
inline constexpr uint32_t CACHE_FLUSH_TS = 0x04;
inline constexpr uint32_t CACHE_FLUSH = 0x06;
inline constexpr uint32_t CS_PARTIAL_FLUSH = 0x07;
inline constexpr uint32_t CACHE_FLUSH_AND_INV_TS_EVENT = 0x14;
inline constexpr uint32_t CACHE_FLUSH_AND_INV_EVENT = 0x16;
inline constexpr uint32_t CS_CONTEXT_DONE = 0x23;
inline constexpr uint32_t BOTTOM_OF_PIPE_TS = 0x28;
inline constexpr uint32_t CS_DONE = 0x2F;
inline constexpr uint32_t THREAD_TRACE_MARKER = 0x35;
inline constexpr ValueName VGT_EVENT_TYPE_NAMES[] = {
    {CACHE_FLUSH_TS, "CACHE_FLUSH_TS"},
    {CACHE_FLUSH, "CACHE_FLUSH"},
    {CS_PARTIAL_FLUSH, "CS_PARTIAL_FLUSH"},
    {CACHE_FLUSH_AND_INV_TS_EVENT, "CACHE_FLUSH_AND_INV_TS_EVENT"},
    {CACHE_FLUSH_AND_INV_EVENT, "CACHE_FLUSH_AND_INV_EVENT"},
    {CS_CONTEXT_DONE, "CS_CONTEXT_DONE"},
    {BOTTOM_OF_PIPE_TS, "BOTTOM_OF_PIPE_TS"},
    {CS_DONE, "CS_DONE"},
    {THREAD_TRACE_MARKER, "THREAD_TRACE_MARKER"},
};

// ---- SET_SH_REG: dword 1 = where, dwords 2.. = values of consecutive registers ----
namespace SET_SH_REG {
inline constexpr Field REG_OFFSET{"REG_OFFSET", 1, 15, 0};  // absolute address - 0x2C00
inline constexpr Field VMID_SHIFT{"VMID_SHIFT", 1, 27, 23};
inline constexpr ValueName INDEX_VALUES[] = {{0, "DEFAULT"}, {1, "INSERT_VMID"}};
inline constexpr Field INDEX = Field("INDEX", 1, 31, 28).withValues(INDEX_VALUES);
inline constexpr Field FIELDS[] = {REG_OFFSET, VMID_SHIFT, INDEX};
}  // namespace SET_SH_REG

// ---- DISPATCH_DIRECT: DIM_* are end positions (PAL), initiator as COMPUTE_DISPATCH_INITIATOR ----
namespace DISPATCH_DIRECT {
inline constexpr Field DIM_X{"DIM_X", 1, 31, 0};
inline constexpr Field DIM_Y{"DIM_Y", 2, 31, 0};
inline constexpr Field DIM_Z{"DIM_Z", 3, 31, 0};
inline constexpr Field DISPATCH_INITIATOR =
    Field("DISPATCH_INITIATOR", 4, 31, 0).withSubfields(COMPUTE_DISPATCH_INITIATOR_FIELDS);
inline constexpr Field FIELDS[] = {DIM_X, DIM_Y, DIM_Z, DISPATCH_INITIATOR};
}  // namespace DISPATCH_DIRECT

// ---- DISPATCH_INDIRECT (MEC form): address of 3 x u32 group counts ----
namespace DISPATCH_INDIRECT {
inline constexpr Field ADDR_LO{"ADDR_LO", 1, 31, 0};  // 4-byte aligned
inline constexpr Field ADDR_HI{"ADDR_HI", 2, 31, 0};
inline constexpr Field DISPATCH_INITIATOR =
    Field("DISPATCH_INITIATOR", 3, 31, 0).withSubfields(COMPUTE_DISPATCH_INITIATOR_FIELDS);
inline constexpr Field FIELDS[] = {ADDR_LO, ADDR_HI, DISPATCH_INITIATOR};
}  // namespace DISPATCH_INDIRECT

// ---- ACQUIRE_MEM (MEC form; dword 1 reserved): cache invalidate/writeback over a range ----
inline constexpr Field ACQUIRE_MEM_GCR_FIELDS[] = {  // nvd.h PACKET3_ACQUIRE_MEM_GCR_CNTL_*, PAL Gfx10AcquireMemGcrCntl
    bits("GLI_INV", 1, 0),
    bits("GL1_RANGE", 3, 2),
    bit("GLM_WB", 4),
    bit("GLM_INV", 5),
    bit("GLK_WB", 6),
    bit("GLK_INV", 7),
    bit("GLV_INV", 8),
    bit("GL1_INV", 9),
    bit("GL2_US", 10),
    bits("GL2_RANGE", 12, 11),
    bit("GL2_DISCARD", 13),
    bit("GL2_INV", 14),
    bit("GL2_WB", 15),
    bits("SEQ", 17, 16),
    bit("RANGE_IS_PA", 18),
};
namespace ACQUIRE_MEM {
inline constexpr Field COHER_SIZE{"COHER_SIZE", 2, 31, 0};  // 256-byte units (PAL)
inline constexpr Field COHER_SIZE_HI{"COHER_SIZE_HI", 3, 7, 0};
inline constexpr Field COHER_BASE_LO{"COHER_BASE_LO", 4, 31, 0};
inline constexpr Field COHER_BASE_HI{"COHER_BASE_HI", 5, 23, 0};
inline constexpr Field POLL_INTERVAL{"POLL_INTERVAL", 6, 15, 0};
inline constexpr Field GCR_CNTL = Field("GCR_CNTL", 7, 18, 0).withSubfields(ACQUIRE_MEM_GCR_FIELDS);
inline constexpr Field FIELDS[] = {COHER_SIZE, COHER_SIZE_HI, COHER_BASE_LO, COHER_BASE_HI, POLL_INTERVAL, GCR_CNTL};
}  // namespace ACQUIRE_MEM

// ---- RELEASE_MEM: at an end-of-pipe event, write data (fence / clock) and/or interrupt ----
inline constexpr Field RELEASE_MEM_GCR_FIELDS[] = {  // bits of the 13-bit field (nvd.h, PAL Gfx10ReleaseMemGcrCntl)
    bit("GLM_WB", 0),
    bit("GLM_INV", 1),
    bit("GLV_INV", 2),
    bit("GL1_INV", 3),
    bit("GL2_US", 4),
    bits("GL2_RANGE", 6, 5),
    bit("GL2_DISCARD", 7),
    bit("GL2_INV", 8),
    bit("GL2_WB", 9),
    bits("SEQ", 11, 10),
    bit("GLK_WB", 12),
};
namespace RELEASE_MEM {
inline constexpr Field EVENT_TYPE = Field("EVENT_TYPE", 1, 5, 0).withSomeValues(VGT_EVENT_TYPE_NAMES);
inline constexpr Field WAIT_SYNC{"WAIT_SYNC", 1, 7, 7};
inline constexpr ValueName EVENT_INDEX_VALUES[] = {{5, "END_OF_PIPE"}, {6, "SHADER_DONE"}};
inline constexpr Field EVENT_INDEX = Field("EVENT_INDEX", 1, 11, 8).withValues(EVENT_INDEX_VALUES);
inline constexpr Field GCR_CNTL = Field("GCR_CNTL", 1, 24, 12).withSubfields(RELEASE_MEM_GCR_FIELDS);
inline constexpr Field CACHE_POLICY{"CACHE_POLICY", 1, 26, 25};
inline constexpr Field PQ_EXE_STATUS{"PQ_EXE_STATUS", 1, 28, 28};
inline constexpr Field GLK_INV{"GLK_INV", 1, 30, 30};
inline constexpr ValueName DST_SEL_VALUES[] = {
    {0, "MEMORY_CONTROLLER"}, {1, "TC_L2"}, {2, "QUEUE_WRITE_POINTER_REGISTER"},
    {3, "QUEUE_WRITE_POINTER_POLL_MASK_BIT"}
};
inline constexpr Field DST_SEL = Field("DST_SEL", 2, 17, 16).withValues(DST_SEL_VALUES);
inline constexpr Field MES_INTR_PIPE{"MES_INTR_PIPE", 2, 21, 20};
inline constexpr Field MES_ACTION_ID{"MES_ACTION_ID", 2, 23, 22};
inline constexpr ValueName INT_SEL_NAMES[] = {
    {0, "NONE"},
    {1, "SEND_INTERRUPT_ONLY"},
    {2, "SEND_INTERRUPT_AFTER_WRITE_CONFIRM"},
    {3, "SEND_DATA_AND_WRITE_CONFIRM"},
    {4, "UNCONDITIONALLY_SEND_INT_CTXID"},
    {5, "CONDITIONALLY_SEND_INT_CTXID_32"},
    {6, "CONDITIONALLY_SEND_INT_CTXID_64"},
};
inline constexpr Field INT_SEL = Field("INT_SEL", 2, 26, 24).withValues(INT_SEL_NAMES);
inline constexpr ValueName DATA_SEL_VALUES[] = {
    {0, "NONE"}, {1, "SEND_32_BIT_LOW"}, {2, "SEND_64_BIT_DATA"}, {3, "SEND_GPU_CLOCK_COUNTER"},
    {4, "SEND_SYSTEM_CLOCK_COUNTER"}, {5, "STORE_GDS_DATA_TO_MEMORY"}, {7, "ATOMIC_ADD_32_LOW"}
};
inline constexpr Field DATA_SEL = Field("DATA_SEL", 2, 31, 29).withValues(DATA_SEL_VALUES);
inline constexpr Field ADDRESS_LO{"ADDRESS_LO", 3, 31, 0};  // 4-byte aligned (8 for 64-bit data)
inline constexpr Field ADDRESS_HI{"ADDRESS_HI", 4, 31, 0};
inline constexpr Field DATA_LO{"DATA_LO", 5, 31, 0};
inline constexpr Field DATA_HI{"DATA_HI", 6, 31, 0};
inline constexpr Field INT_CTXID{"INT_CTXID", 7, 31, 0};
inline constexpr Field FIELDS[] = {EVENT_TYPE, WAIT_SYNC, EVENT_INDEX, GCR_CNTL, CACHE_POLICY, PQ_EXE_STATUS,
                                   GLK_INV, DST_SEL, MES_INTR_PIPE, MES_ACTION_ID, INT_SEL, DATA_SEL,
                                   ADDRESS_LO, ADDRESS_HI, DATA_LO, DATA_HI, INT_CTXID};
}  // namespace RELEASE_MEM

// ---- WAIT_REG_MEM: stall the queue until (value & MASK) <FUNCTION> REFERENCE ----
namespace WAIT_REG_MEM {
inline constexpr ValueName FUNCTION_VALUES[] = {
    {0, "ALWAYS"}, {1, "LESS"}, {2, "LESS_EQUAL"}, {3, "EQUAL"}, {4, "NOT_EQUAL"}, {5, "GREATER_EQUAL"},
    {6, "GREATER"}
};
inline constexpr Field FUNCTION = Field("FUNCTION", 1, 2, 0).withValues(FUNCTION_VALUES);
inline constexpr ValueName MEM_SPACE_VALUES[] = {{0, "REGISTER"}, {1, "MEMORY"}};
inline constexpr Field MEM_SPACE = Field("MEM_SPACE", 1, 5, 4).withValues(MEM_SPACE_VALUES);
inline constexpr ValueName OPERATION_VALUES[] = {
    {0, "WAIT_REG_MEM"}, {1, "WR_WAIT_WR_REG"}, {3, "WAIT_MEM_PREEMPTABLE"}
};
inline constexpr Field OPERATION = Field("OPERATION", 1, 7, 6).withValues(OPERATION_VALUES);
inline constexpr Field MES_INTR_PIPE{"MES_INTR_PIPE", 1, 23, 22};
inline constexpr Field MES_ACTION{"MES_ACTION", 1, 24, 24};
inline constexpr Field CACHE_POLICY{"CACHE_POLICY", 1, 26, 25};
inline constexpr Field POLL_ADDR_LO{"POLL_ADDR_LO", 2, 31, 0};  // memory: byte address, 4-aligned; register: [17:0]
inline constexpr Field POLL_ADDR_HI{"POLL_ADDR_HI", 3, 31, 0};
inline constexpr Field REFERENCE{"REFERENCE", 4, 31, 0};
inline constexpr Field MASK{"MASK", 5, 31, 0};
inline constexpr Field POLL_INTERVAL{"POLL_INTERVAL", 6, 15, 0};  // unit undocumented (FACTS.md §2.6)
inline constexpr Field OPTIMIZE_ACE_OFFLOAD_MODE{"OPTIMIZE_ACE_OFFLOAD_MODE", 6, 31, 31};
inline constexpr Field FIELDS[] = {FUNCTION, MEM_SPACE, OPERATION, MES_INTR_PIPE, MES_ACTION, CACHE_POLICY,
                                   POLL_ADDR_LO, POLL_ADDR_HI, REFERENCE, MASK, POLL_INTERVAL,
                                   OPTIMIZE_ACE_OFFLOAD_MODE};
}  // namespace WAIT_REG_MEM

// ---- WRITE_DATA: dwords 4.. written to memory or registers ----
namespace WRITE_DATA {
inline constexpr ValueName DST_SEL_VALUES[] = {
    {0, "MEM_MAPPED_REGISTER"}, {2, "TC_L2"}, {3, "GDS"}, {5, "MEMORY"},
    {6, "MEMORY_MAPPED_ADC_PERSISTENT_STATE"}
};
inline constexpr Field DST_SEL = Field("DST_SEL", 1, 11, 8).withValues(DST_SEL_VALUES);
inline constexpr ValueName ADDR_INCR_VALUES[] = {{0, "INCREMENT_ADDRESS"}, {1, "DO_NOT_INCREMENT_ADDRESS"}};
inline constexpr Field ADDR_INCR = Field("ADDR_INCR", 1, 16, 16).withValues(ADDR_INCR_VALUES);
inline constexpr Field WR_CONFIRM{"WR_CONFIRM", 1, 20, 20};
inline constexpr Field CACHE_POLICY{"CACHE_POLICY", 1, 26, 25};
inline constexpr Field DST_ADDR_LO{"DST_ADDR_LO", 2, 31, 0};  // memory: 4-byte aligned; register: offset
inline constexpr Field DST_ADDR_HI{"DST_ADDR_HI", 3, 31, 0};
inline constexpr Field FIELDS[] = {DST_SEL, ADDR_INCR, WR_CONFIRM, CACHE_POLICY, DST_ADDR_LO, DST_ADDR_HI};
}  // namespace WRITE_DATA

// ---- COPY_DATA: one 32/64-bit value from a source selector to a destination selector ----
namespace COPY_DATA {
inline constexpr ValueName SRC_SEL_VALUES[] = {
    {0, "MEM_MAPPED_REGISTER"}, {1, "TC_L2_OBSOLETE"}, {2, "TC_L2"}, {3, "GDS"}, {4, "PERFCOUNTERS"},
    {5, "IMMEDIATE_DATA"}, {6, "ATOMIC_RETURN_DATA"}, {9, "GPU_CLOCK_COUNT"}, {10, "SYSTEM_CLOCK_COUNT"}
};
inline constexpr Field SRC_SEL = Field("SRC_SEL", 1, 3, 0).withValues(SRC_SEL_VALUES);
inline constexpr ValueName DST_SEL_VALUES[] = {
    {0, "MEM_MAPPED_REGISTER"}, {2, "TC_L2"}, {3, "GDS"}, {4, "PERFCOUNTERS"}, {5, "TC_L2_OBSOLETE"},
    {6, "MEM_MAPPED_REG_DC"}
};
inline constexpr Field DST_SEL = Field("DST_SEL", 1, 11, 8).withValues(DST_SEL_VALUES);
inline constexpr Field SRC_CACHE_POLICY{"SRC_CACHE_POLICY", 1, 14, 13};
inline constexpr ValueName COUNT_SEL_VALUES[] = {{0, "32_BITS_OF_DATA"}, {1, "64_BITS_OF_DATA"}};
inline constexpr Field COUNT_SEL = Field("COUNT_SEL", 1, 16, 16).withValues(COUNT_SEL_VALUES);
inline constexpr Field WR_CONFIRM{"WR_CONFIRM", 1, 20, 20};
inline constexpr Field DST_CACHE_POLICY{"DST_CACHE_POLICY", 1, 26, 25};
inline constexpr Field PQ_EXE_STATUS{"PQ_EXE_STATUS", 1, 29, 29};
inline constexpr Field SRC_ADDR_LO{"SRC_ADDR_LO", 2, 31, 0};  // or register offset, or immediate data low
inline constexpr Field SRC_ADDR_HI{"SRC_ADDR_HI", 3, 31, 0};  // or immediate data high
inline constexpr Field DST_ADDR_LO{"DST_ADDR_LO", 4, 31, 0};  // or register offset
inline constexpr Field DST_ADDR_HI{"DST_ADDR_HI", 5, 31, 0};
inline constexpr Field FIELDS[] = {SRC_SEL, DST_SEL, SRC_CACHE_POLICY, COUNT_SEL, WR_CONFIRM, DST_CACHE_POLICY,
                                   PQ_EXE_STATUS, SRC_ADDR_LO, SRC_ADDR_HI, DST_ADDR_LO, DST_ADDR_HI};
}  // namespace COPY_DATA

// ---- DMA_DATA (MEC form): the CP's DMA engine copies BYTE_COUNT bytes from SRC to DST, or fills
// them with the DATA dword (PAL PM4_MEC_DMA_DATA, 7 dwords; Mesa sid.h PKT3_DMA_DATA S_411_* /
// S_415_*, whose CP_SYNC bit 31 is the PFP form's: reserved on MEC) ----
namespace DMA_DATA {
inline constexpr ValueName CACHE_POLICY_VALUES[] = {{0, "LRU"}, {1, "STREAM"}, {2, "NOA"}, {3, "BYPASS"}};
inline constexpr Field SRC_CACHE_POLICY = Field("SRC_CACHE_POLICY", 1, 14, 13).withValues(CACHE_POLICY_VALUES);
inline constexpr ValueName DST_SEL_VALUES[] = {{0, "DST_ADDR_USING_DAS"}, {1, "GDS"}, {2, "DST_NOWHERE"}, {3, "DST_ADDR_USING_L2"}};
inline constexpr Field DST_SEL = Field("DST_SEL", 1, 21, 20).withValues(DST_SEL_VALUES);
inline constexpr Field DST_CACHE_POLICY = Field("DST_CACHE_POLICY", 1, 26, 25).withValues(CACHE_POLICY_VALUES);
inline constexpr ValueName SRC_SEL_VALUES[] = {{0, "SRC_ADDR_USING_SAS"}, {1, "GDS"}, {2, "DATA"}, {3, "SRC_ADDR_USING_L2"}};
inline constexpr Field SRC_SEL = Field("SRC_SEL", 1, 30, 29).withValues(SRC_SEL_VALUES);
inline constexpr Field SRC_ADDR_LO_OR_DATA{"SRC_ADDR_LO_OR_DATA", 2, 31, 0};
inline constexpr Field SRC_ADDR_HI{"SRC_ADDR_HI", 3, 31, 0};
inline constexpr Field DST_ADDR_LO{"DST_ADDR_LO", 4, 31, 0};
inline constexpr Field DST_ADDR_HI{"DST_ADDR_HI", 5, 31, 0};
inline constexpr Field BYTE_COUNT{"BYTE_COUNT", 6, 25, 0};  // at most 64 MiB - 1 per packet
inline constexpr ValueName SPACE_VALUES[] = {{0, "MEMORY"}};
inline constexpr Field SAS = Field("SAS", 6, 26, 26).withValues(SPACE_VALUES);
inline constexpr Field DAS = Field("DAS", 6, 27, 27).withValues(SPACE_VALUES);
inline constexpr ValueName INCREMENT_VALUES[] = {{0, "INCREMENT"}, {1, "NO_INCREMENT"}};
inline constexpr Field SAIC = Field("SAIC", 6, 28, 28).withValues(INCREMENT_VALUES);
inline constexpr Field DAIC = Field("DAIC", 6, 29, 29).withValues(INCREMENT_VALUES);
inline constexpr Field RAW_WAIT{"RAW_WAIT", 6, 30, 30};  // wait for earlier writes before reading
inline constexpr Field DIS_WC{"DIS_WC", 6, 31, 31};      // no write confirm
inline constexpr Field FIELDS[] = {SRC_CACHE_POLICY, DST_SEL, DST_CACHE_POLICY, SRC_SEL, SRC_ADDR_LO_OR_DATA, SRC_ADDR_HI,
                                   DST_ADDR_LO, DST_ADDR_HI, BYTE_COUNT, SAS, DAS, SAIC, DAIC, RAW_WAIT, DIS_WC};
}  // namespace DMA_DATA

// ---- INDIRECT_BUFFER: execute IB_SIZE dwords at IB_BASE, then continue here (CHAIN: don't return) ----
namespace INDIRECT_BUFFER {
inline constexpr Field IB_BASE_LO{"IB_BASE_LO", 1, 31, 0};  // dword aligned
inline constexpr Field IB_BASE_HI{"IB_BASE_HI", 2, 31, 0};
inline constexpr Field IB_SIZE{"IB_SIZE", 3, 19, 0};  // dwords
inline constexpr Field CHAIN{"CHAIN", 3, 20, 20};
inline constexpr Field OFFLOAD_POLLING{"OFFLOAD_POLLING", 3, 21, 21};
inline constexpr Field VALID{"VALID", 3, 23, 23};  // compute only; PAL and Linux set it
inline constexpr Field VMID{"VMID", 3, 27, 24};
inline constexpr Field CACHE_POLICY{"CACHE_POLICY", 3, 29, 28};
inline constexpr Field PRIV{"PRIV", 3, 31, 31};  // soc15d.h
inline constexpr Field FIELDS[] = {IB_BASE_LO, IB_BASE_HI, IB_SIZE, CHAIN, OFFLOAD_POLLING, VALID, VMID,
                                   CACHE_POLICY, PRIV};
}  // namespace INDIRECT_BUFFER

// ---- COND_EXEC: run the next EXEC_COUNT dwords of this stream only if the dword at ADDR is not
// zero, else skip them (Linux gfx_v11_0.c emit_init_cond_exec: PACKET3(COND_EXEC, 3), address,
// 0, count; PAL PM4_MEC_COND_EXEC) ----
namespace COND_EXEC {
inline constexpr Field ADDR_LO{"ADDR_LO", 1, 31, 0};  // 4-byte aligned
inline constexpr Field ADDR_HI{"ADDR_HI", 2, 31, 0};
inline constexpr Field CACHE_POLICY{"CACHE_POLICY", 3, 26, 25};
inline constexpr Field EXEC_COUNT{"EXEC_COUNT", 4, 13, 0};  // dwords
inline constexpr Field FIELDS[] = {ADDR_LO, ADDR_HI, CACHE_POLICY, EXEC_COUNT};
}  // namespace COND_EXEC

// ---- EVENT_WRITE: a pipeline event; 2 dwords except SAMPLE_* events (4) ----
namespace EVENT_WRITE {
inline constexpr Field EVENT_TYPE = Field("EVENT_TYPE", 1, 5, 0).withSomeValues(VGT_EVENT_TYPE_NAMES);
inline constexpr ValueName EVENT_INDEX_VALUES[] = {
    {0, "OTHER"}, {2, "SAMPLE_PIPELINESTAT"}, {4, "CS_PARTIAL_FLUSH"}
};
inline constexpr Field EVENT_INDEX = Field("EVENT_INDEX", 1, 11, 8).withValues(EVENT_INDEX_VALUES);
inline constexpr Field SAMP_PLST_CNTR_MODE{"SAMP_PLST_CNTR_MODE", 1, 30, 29};
inline constexpr Field OFFLOAD_ENABLE{"OFFLOAD_ENABLE", 1, 31, 31};  // PAL, soc15d (not nvd.h's bit 0)
inline constexpr Field ADDRESS_LO{"ADDRESS_LO", 2, 31, 0};  // SAMPLE_* events only, 8-byte aligned
inline constexpr Field ADDRESS_HI{"ADDRESS_HI", 3, 31, 0};
inline constexpr Field FIELDS[] = {EVENT_TYPE, EVENT_INDEX, SAMP_PLST_CNTR_MODE, OFFLOAD_ENABLE, ADDRESS_LO,
                                   ADDRESS_HI};
}  // namespace EVENT_WRITE

}  // namespace gfx11

// gfx12 = gfx11 plus the differences below: every name gfx12 does not define (the header,
// SET_SH_REG, EVENT_WRITE, the event types, most fields) is gfx11's (`using namespace`), and
// each packet's FIELDS is gfx11's overlaid with the fields that changed (field.h overlay()).
namespace gfx12 {

using namespace gfx11;

namespace DISPATCH_DIRECT {
using namespace gfx11::DISPATCH_DIRECT;
inline constexpr Field DISPATCH_INITIATOR =
    Field("DISPATCH_INITIATOR", 4, 31, 0).withSubfields(COMPUTE_DISPATCH_INITIATOR_FIELDS);
inline constexpr Field CHANGED[] = {DISPATCH_INITIATOR};
inline constexpr auto FIELDS = overlay(gfx11::DISPATCH_DIRECT::FIELDS, CHANGED);
}  // namespace DISPATCH_DIRECT

namespace DISPATCH_INDIRECT {
using namespace gfx11::DISPATCH_INDIRECT;
inline constexpr Field DISPATCH_INITIATOR =
    Field("DISPATCH_INITIATOR", 3, 31, 0).withSubfields(COMPUTE_DISPATCH_INITIATOR_FIELDS);
inline constexpr Field CHANGED[] = {DISPATCH_INITIATOR};
inline constexpr auto FIELDS = overlay(gfx11::DISPATCH_INDIRECT::FIELDS, CHANGED);
}  // namespace DISPATCH_INDIRECT

// gfx12 has no GLM / GL1 caches: those GCR bits are reserved (PAL gfx12CmdUtil.cpp AcquireMemGcrCntl,
// ReleaseMemGcrCntl; one source).
inline constexpr auto ACQUIRE_MEM_GCR_FIELDS = without(gfx11::ACQUIRE_MEM_GCR_FIELDS, {"GLM_WB", "GLM_INV", "GL1_INV"});
namespace ACQUIRE_MEM {
using namespace gfx11::ACQUIRE_MEM;
inline constexpr Field GCR_CNTL = Field("GCR_CNTL", 7, 18, 0).withSubfields(ACQUIRE_MEM_GCR_FIELDS);
inline constexpr Field CHANGED[] = {GCR_CNTL};
inline constexpr auto FIELDS = overlay(gfx11::ACQUIRE_MEM::FIELDS, CHANGED);
}  // namespace ACQUIRE_MEM

inline constexpr ValueName TEMPORAL_NAMES[] = {{0, "RT"}, {1, "NT"}, {2, "HT"}, {3, "LU"}};

inline constexpr auto RELEASE_MEM_GCR_FIELDS = without(gfx11::RELEASE_MEM_GCR_FIELDS, {"GLM_WB", "GLM_INV", "GL1_INV"});
namespace RELEASE_MEM {
using namespace gfx11::RELEASE_MEM;
inline constexpr Field GCR_CNTL = Field("GCR_CNTL", 1, 24, 12).withSubfields(RELEASE_MEM_GCR_FIELDS);
inline constexpr Field TEMPORAL = Field("TEMPORAL", 1, 26, 25).withValues(TEMPORAL_NAMES);
// gfx12 lists DATA_SEL 0-4 only (PAL gfx12 MEC_RELEASE_MEM_data_sel_enum).
inline constexpr ValueName DATA_SEL_VALUES[] = {
    {0, "NONE"}, {1, "SEND_32_BIT_LOW"}, {2, "SEND_64_BIT_DATA"}, {3, "SEND_GPU_CLOCK_COUNTER"},
    {4, "SEND_SYSTEM_CLOCK_COUNTER"}
};
inline constexpr Field DATA_SEL = Field("DATA_SEL", 2, 31, 29).withValues(DATA_SEL_VALUES);
inline constexpr Field CHANGED[] = {GCR_CNTL, TEMPORAL, DATA_SEL};
inline constexpr auto FIELDS = overlay(gfx11::RELEASE_MEM::FIELDS, CHANGED);
}  // namespace RELEASE_MEM

namespace WAIT_REG_MEM {
using namespace gfx11::WAIT_REG_MEM;
inline constexpr Field TEMPORAL = Field("TEMPORAL", 1, 26, 25).withValues(TEMPORAL_NAMES);
inline constexpr Field CHANGED[] = {TEMPORAL};
inline constexpr auto FIELDS = overlay(gfx11::WAIT_REG_MEM::FIELDS, CHANGED);
}  // namespace WAIT_REG_MEM

inline constexpr ValueName PF_VF_MODE_VALUES[] = {{0, "PF_VF_DISABLED"}, {1, "PF_VF_ENABLED"}};

namespace WRITE_DATA {
using namespace gfx11::WRITE_DATA;
inline constexpr ValueName DST_SEL_VALUES[] = {  // no GDS (3) on gfx12
    {0, "MEM_MAPPED_REGISTER"}, {2, "TC_L2"}, {5, "MEMORY"}, {6, "MEMORY_MAPPED_ADC_PERSISTENT_STATE"}
};
inline constexpr Field DST_SEL = Field("DST_SEL", 1, 11, 8).withValues(DST_SEL_VALUES);
inline constexpr Field MODE = Field("MODE", 1, 21, 21).withValues(PF_VF_MODE_VALUES);
inline constexpr Field AID_ID{"AID_ID", 1, 24, 23};
inline constexpr Field TEMPORAL = Field("TEMPORAL", 1, 26, 25).withValues(TEMPORAL_NAMES);
inline constexpr Field CHANGED[] = {DST_SEL, MODE, AID_ID, TEMPORAL};
inline constexpr auto FIELDS = overlay(gfx11::WRITE_DATA::FIELDS, CHANGED);
}  // namespace WRITE_DATA

namespace COPY_DATA {
using namespace gfx11::COPY_DATA;
inline constexpr ValueName SRC_SEL_VALUES[] = {  // no GDS (3) on gfx12
    {0, "MEM_MAPPED_REGISTER"}, {1, "TC_L2_OBSOLETE"}, {2, "TC_L2"}, {4, "PERFCOUNTERS"},
    {5, "IMMEDIATE_DATA"}, {6, "ATOMIC_RETURN_DATA"}, {9, "GPU_CLOCK_COUNT"}, {10, "SYSTEM_CLOCK_COUNT"}
};
inline constexpr Field SRC_SEL = Field("SRC_SEL", 1, 3, 0).withValues(SRC_SEL_VALUES);
inline constexpr ValueName DST_SEL_VALUES[] = {
    {0, "MEM_MAPPED_REGISTER"}, {2, "TC_L2"}, {4, "PERFCOUNTERS"}, {5, "TC_L2_OBSOLETE"},
    {6, "MEM_MAPPED_REG_DC"}
};
inline constexpr Field DST_SEL = Field("DST_SEL", 1, 11, 8).withValues(DST_SEL_VALUES);
inline constexpr Field SRC_TEMPORAL = Field("SRC_TEMPORAL", 1, 14, 13).withValues(TEMPORAL_NAMES);
inline constexpr Field MODE = Field("MODE", 1, 21, 21).withValues(PF_VF_MODE_VALUES);
inline constexpr Field AID_ID{"AID_ID", 1, 24, 23};
inline constexpr Field DST_TEMPORAL = Field("DST_TEMPORAL", 1, 26, 25).withValues(TEMPORAL_NAMES);
inline constexpr Field CHANGED[] = {SRC_SEL, DST_SEL, SRC_TEMPORAL, MODE, AID_ID, DST_TEMPORAL};
inline constexpr auto FIELDS = overlay(gfx11::COPY_DATA::FIELDS, CHANGED);
}  // namespace COPY_DATA

// gfx12 DMA_DATA: the cache policies are TEMPORAL, and neither side may be GDS (PAL gfx12
// MEC_DMA_DATA_*_enum).
namespace DMA_DATA {
using namespace gfx11::DMA_DATA;
inline constexpr Field SRC_TEMPORAL = Field("SRC_TEMPORAL", 1, 14, 13).withValues(TEMPORAL_NAMES);
inline constexpr ValueName DST_SEL_VALUES[] = {{0, "DST_ADDR_USING_DAS"}, {2, "DST_NOWHERE"}, {3, "DST_ADDR_USING_L2"}};
inline constexpr Field DST_SEL = Field("DST_SEL", 1, 21, 20).withValues(DST_SEL_VALUES);
inline constexpr Field DST_TEMPORAL = Field("DST_TEMPORAL", 1, 26, 25).withValues(TEMPORAL_NAMES);
inline constexpr ValueName SRC_SEL_VALUES[] = {{0, "SRC_ADDR_USING_SAS"}, {2, "DATA"}, {3, "SRC_ADDR_USING_L2"}};
inline constexpr Field SRC_SEL = Field("SRC_SEL", 1, 30, 29).withValues(SRC_SEL_VALUES);
inline constexpr Field CHANGED[] = {SRC_TEMPORAL, DST_SEL, DST_TEMPORAL, SRC_SEL};
inline constexpr auto FIELDS = overlay(gfx11::DMA_DATA::FIELDS, CHANGED);
}  // namespace DMA_DATA

namespace INDIRECT_BUFFER {
using namespace gfx11::INDIRECT_BUFFER;
inline constexpr Field TEMPORAL = Field("TEMPORAL", 3, 29, 28).withValues(TEMPORAL_NAMES);
inline constexpr Field CHANGED[] = {TEMPORAL};
inline constexpr auto FIELDS = overlay(gfx11::INDIRECT_BUFFER::FIELDS, CHANGED, {"PRIV"});
}  // namespace INDIRECT_BUFFER

}  // namespace gfx12

// What a packet looks like: its body size limits and the fields of its fixed dwords. Variable
// tails (SET_SH_REG values, WRITE_DATA data, NOP payload) are described by the opcode.
struct PacketSpec {
    Opcode opcode;
    std::string_view name;
    uint32_t minBody;  // body dwords = COUNT + 1
    uint32_t maxBody;
    std::span<const Field> fields;

    consteval Field field(std::string_view fieldName) const { return fieldNamed(fields, fieldName); }
};

namespace gfx11 {
inline constexpr PacketSpec PACKETS[] = {
    {Opcode::NOP, "NOP", 0, kMaxBodyDwords, {}},
    {Opcode::COND_EXEC, "COND_EXEC", 4, 4, COND_EXEC::FIELDS},
    {Opcode::DISPATCH_DIRECT, "DISPATCH_DIRECT", 4, 4, DISPATCH_DIRECT::FIELDS},
    {Opcode::DISPATCH_INDIRECT, "DISPATCH_INDIRECT", 3, 3, DISPATCH_INDIRECT::FIELDS},
    {Opcode::WRITE_DATA, "WRITE_DATA", 4, kMaxBodyDwords, WRITE_DATA::FIELDS},
    {Opcode::WAIT_REG_MEM, "WAIT_REG_MEM", 6, 6, WAIT_REG_MEM::FIELDS},
    {Opcode::INDIRECT_BUFFER, "INDIRECT_BUFFER", 3, 3, INDIRECT_BUFFER::FIELDS},
    {Opcode::COPY_DATA, "COPY_DATA", 5, 5, COPY_DATA::FIELDS},
    {Opcode::EVENT_WRITE, "EVENT_WRITE", 1, 3, EVENT_WRITE::FIELDS},
    {Opcode::RELEASE_MEM, "RELEASE_MEM", 7, 7, RELEASE_MEM::FIELDS},
    {Opcode::DMA_DATA, "DMA_DATA", 6, 6, DMA_DATA::FIELDS},
    {Opcode::ACQUIRE_MEM, "ACQUIRE_MEM", 7, 7, ACQUIRE_MEM::FIELDS},
    {Opcode::SET_SH_REG, "SET_SH_REG", 2, kMaxBodyDwords, SET_SH_REG::FIELDS},
};
}  // namespace gfx11

// A packet whose fields differ on a later generation, and its fields there.
struct PacketFields {
    Opcode opcode;
    std::span<const Field> fields;
};
// `base` (an earlier generation's packet table) with the fields of the packets in `changes`.
template <size_t N>
constexpr std::array<PacketSpec, N> withFields(const PacketSpec (&base)[N], std::initializer_list<PacketFields> changes) {
    std::array<PacketSpec, N> t{};
    for (size_t i = 0; i < N; ++i) {
        t[i] = base[i];
        for (const PacketFields& c : changes)
            if (c.opcode == base[i].opcode) t[i].fields = c.fields;
    }
    return t;
}

namespace gfx12 {
// The same packets and body sizes as gfx11; NOP, EVENT_WRITE and SET_SH_REG keep gfx11's fields.
inline constexpr auto PACKETS = withFields(gfx11::PACKETS, {
    {Opcode::DISPATCH_DIRECT, DISPATCH_DIRECT::FIELDS},
    {Opcode::DISPATCH_INDIRECT, DISPATCH_INDIRECT::FIELDS},
    {Opcode::WRITE_DATA, WRITE_DATA::FIELDS},
    {Opcode::WAIT_REG_MEM, WAIT_REG_MEM::FIELDS},
    {Opcode::INDIRECT_BUFFER, INDIRECT_BUFFER::FIELDS},
    {Opcode::COPY_DATA, COPY_DATA::FIELDS},
    {Opcode::RELEASE_MEM, RELEASE_MEM::FIELDS},
    {Opcode::DMA_DATA, DMA_DATA::FIELDS},
    {Opcode::ACQUIRE_MEM, ACQUIRE_MEM::FIELDS},
});
}  // namespace gfx12

constexpr std::span<const PacketSpec> packetSpecs(Gfx gfx) {
    if (gfx == Gfx::Gfx11) return gfx11::PACKETS;
    return gfx12::PACKETS;
}

// The spec of an opcode this library supports, or nullptr.
constexpr const PacketSpec* findPacket(Gfx gfx, uint32_t opcode) {
    for (const PacketSpec& p : packetSpecs(gfx))
        if (static_cast<uint32_t>(p.opcode) == opcode) return &p;
    return nullptr;
}

constexpr std::string_view opcodeName(Opcode op) {
    const PacketSpec* p = findPacket(Gfx::Gfx11, static_cast<uint32_t>(op));
    return p ? p->name : std::string_view{};
}

// Names of opcodes that exist (nvd.h, Mesa sid.h, PAL) but that this library does not build or
// execute, so that an error can say what the packet was.
std::string_view otherOpcodeName(uint32_t opcode);

// A type-3 header. bodyDwords is COUNT + 1 (must be >= 1; a header-only NOP is nopHeaderOnly()).
constexpr uint32_t type3Header(Opcode op, uint32_t bodyDwords, bool computeShaderType = false) {
    assert(bodyDwords >= 1 && bodyDwords <= kMaxBodyDwords);
    namespace H = gfx11::PM4_HEADER;  // the header is the same on gfx12
    return H::TYPE(3) | H::COUNT(bodyDwords - 1) | H::IT_OPCODE(static_cast<uint32_t>(op)) |
           H::SHADER_TYPE(computeShaderType ? 1 : 0);
}
constexpr uint32_t nopHeaderOnly() {
    namespace H = gfx11::PM4_HEADER;
    return H::TYPE(3) | H::COUNT(kNopCountHeaderOnly) | H::IT_OPCODE(static_cast<uint32_t>(Opcode::NOP));
}

}  // namespace zinc::pm4
