#pragma once
// The amdgpu DRM ABI this runtime uses. GEM, VA, CTX, CS, INFO and syncobj come from the headers
// Debian's libdrm-dev installs (<amdgpu_drm.h>, <drm.h>: libdrm 2.4.114); what that copy is too
// old to have is defined here and pinned by static_asserts:
//   - user-mode queues (DRM_AMDGPU_USERQ 0x16, union drm_amdgpu_userq, the gfx11 compute MQD),
//   - AMDGPU_GEM_DOMAIN_DOORBELL, AMDGPU_INFO_FW_MES, AMDGPU_INFO_UQ_FW_AREAS,
//   - drm_amdgpu_info_device's newer tail (userq_ip_mask) and drm_amdgpu_info_hw_ip's
//     ip_discovery_version.
// Source: Linux include/uapi/drm/amdgpu_drm.h, torvalds/linux @0030595c3e8b, cross-checked with
// FACTS.md §6.1/§6.2 (Mesa's and tinygrad's copies: the USERQ union is 72 bytes, ioctl 0xC0486456;
// userq_ip_mask at byte 436 of drm_amdgpu_info_device). The kernel copies in the caller's struct
// size and zero-fills the rest (drm_ioctl), so the older, shorter structs below work on new kernels.
#include <amdgpu_drm.h>
#include <drm.h>

#include <cstddef>
#include <cstdint>

namespace zinc::umq::uapi {

// ---- ioctl numbers (asm-generic/ioctl.h: nr 8 bits, type 8, size 14, dir 2; DRM type 'd') -----
constexpr uint32_t drmIowr(uint32_t nr, uint32_t size) { return (3u << 30) | (size << 16) | (uint32_t('d') << 8) | nr; }

// ---- user-mode queues (not in libdrm 2.4.114) ------------------------------------------------
inline constexpr uint32_t kDrmAmdgpuUserq = 0x16;
inline constexpr uint32_t kUserqOpCreate = 1;
inline constexpr uint32_t kUserqOpFree = 2;
inline constexpr uint32_t kUserqPriorityNormalLow = 0;  // AMDGPU_USERQ_CREATE_FLAGS_QUEUE_PRIORITY_*

struct drm_amdgpu_userq_in {
    uint32_t op;               // AMDGPU_USERQ_OP_*
    uint32_t queue_id;         // FREE only
    uint32_t ip_type;          // AMDGPU_HW_IP_*
    uint32_t doorbell_handle;  // GEM handle of a DOORBELL-domain BO
    uint32_t doorbell_offset;  // 32-bit index of this queue's doorbell inside that BO
    uint32_t flags;            // priority [1:0], SECURE 1<<2
    uint64_t queue_va;         // ring, 256-byte aligned size
    uint64_t queue_size;
    uint64_t rptr_va;          // >= 8 bytes, 8-byte aligned
    uint64_t wptr_va;
    uint64_t mqd;              // user pointer to the IP-specific MQD struct
    uint64_t mqd_size;         // must equal that struct's size
};
struct drm_amdgpu_userq_out {
    uint32_t queue_id;
    uint32_t _pad;
};
union drm_amdgpu_userq {
    drm_amdgpu_userq_in in;
    drm_amdgpu_userq_out out;
};
// The compute queue's MQD on gfx11/gfx12: only the EOP buffer (a separate GEM object, size from
// AMDGPU_INFO_UQ_FW_AREAS; the kernel checks 2048 bytes from eop_va: amdgpu_userq_input_va_validate).
struct drm_amdgpu_userq_mqd_compute_gfx11 {
    uint64_t eop_va;
};
// The same MQD on kernels with the user-queue CWSR series (amd-gfx "[PATCH v5 09/11] drm/amdgpu:
// Add ioctl support for cwsr params", 2026-01-30; FACTS.md §6.2 "pending uapi"): the
// context-save area (control stack, wave state, debugger memory) the CP saves a preempted
// queue's waves into. mes_userq_mqd_create takes exactly sizeof of the struct it was built with,
// so the size we pass says which layout we mean and a refusal (EINVAL) says the kernel's.
struct drm_amdgpu_userq_mqd_compute_gfx11_cwsr {
    uint64_t eop_va;
    uint64_t ctx_save_area_va;
    uint32_t ctx_save_area_size;  // bytes allocated at ctx_save_area_va
    uint32_t pad;                 // the C struct's tail padding
};
inline constexpr uint32_t kIoctlUserq = drmIowr(DRM_COMMAND_BASE + kDrmAmdgpuUserq, sizeof(drm_amdgpu_userq));

static_assert(sizeof(drm_amdgpu_userq_in) == 72);
static_assert(offsetof(drm_amdgpu_userq_in, doorbell_offset) == 16);
static_assert(offsetof(drm_amdgpu_userq_in, queue_va) == 24);
static_assert(offsetof(drm_amdgpu_userq_in, rptr_va) == 40);
static_assert(offsetof(drm_amdgpu_userq_in, wptr_va) == 48);
static_assert(offsetof(drm_amdgpu_userq_in, mqd_size) == 64);
static_assert(sizeof(drm_amdgpu_userq) == 72);
static_assert(sizeof(drm_amdgpu_userq_mqd_compute_gfx11) == 8);
static_assert(sizeof(drm_amdgpu_userq_mqd_compute_gfx11_cwsr) == 24);
static_assert(offsetof(drm_amdgpu_userq_mqd_compute_gfx11_cwsr, ctx_save_area_size) == 16);
static_assert(kIoctlUserq == 0xC0486456u, "FACTS.md §6.2");

// ---- constants newer than libdrm 2.4.114 ----------------------------------------------------
inline constexpr uint32_t kGemDomainDoorbell = 0x40;  // AMDGPU_GEM_DOMAIN_DOORBELL
inline constexpr uint32_t kInfoFwMes = 0x1a;          // AMDGPU_INFO_FW_MES (subquery of FW_VERSION)
inline constexpr uint32_t kInfoUqFwAreas = 0x24;      // AMDGPU_INFO_UQ_FW_AREAS

struct drm_amdgpu_info_uq_metadata_compute {
    uint32_t eop_size;
    uint32_t eop_alignment;
};

// drm_amdgpu_info_device as Linux 6.16+ reports it: libdrm 2.4.114's struct, then the fields
// appended since (the last is userq_ip_mask, 1 << AMDGPU_HW_IP_* per IP with user queues).
struct info_device_tail {
    uint64_t min_engine_clock;
    uint64_t min_memory_clock;
    uint32_t tcp_cache_size, num_sqc_per_wgp, sqc_data_cache_size, sqc_inst_cache_size, gl1c_cache_size, gl2c_cache_size;
    uint64_t mall_size;
    uint32_t enabled_rb_pipes_mask_hi;
    uint32_t shadow_size, shadow_alignment, csa_size, csa_alignment;
    uint32_t userq_ip_mask;
    uint32_t pad;
};
struct info_device {
    drm_amdgpu_info_device base;
    info_device_tail tail;
};
static_assert(sizeof(drm_amdgpu_info_device) == 368);
static_assert(offsetof(info_device, tail.userq_ip_mask) == 436, "FACTS.md §6.2: tinygrad's copy has the field at byte 436");
static_assert(sizeof(info_device) == 448);

// drm_amdgpu_info_hw_ip with the fields appended since libdrm 2.4.114.
struct info_hw_ip {
    drm_amdgpu_info_hw_ip base;  // its last member is _pad, which became ip_discovery_version
    uint32_t userq_num_slots;
    uint32_t pad;
};
static_assert(sizeof(drm_amdgpu_info_hw_ip) == 32);
static_assert(offsetof(drm_amdgpu_info_hw_ip, _pad) == 28);  // ip_discovery_version: 23:16 major, 15:8 minor, 7:0 revision

// ---- the libdrm structs we use, pinned against FACTS.md §6.1 ---------------------------------
static_assert(DRM_IOCTL_AMDGPU_CS == 0xC0186444u);
static_assert(DRM_IOCTL_AMDGPU_CTX == 0xC0106442u);
static_assert(DRM_IOCTL_AMDGPU_GEM_CREATE == 0xC0206440u);
static_assert(DRM_IOCTL_AMDGPU_GEM_MMAP == 0xC0086441u);
static_assert(DRM_IOCTL_AMDGPU_GEM_VA == 0x40286448u, "the 40-byte drm_amdgpu_gem_va");
static_assert(sizeof(drm_amdgpu_cs_chunk_ib) == 32);
static_assert(sizeof(drm_amdgpu_cs_chunk) == 16);
static_assert(sizeof(drm_amdgpu_bo_list_in) == 24);
static_assert(AMDGPU_HW_IP_COMPUTE == 1 && AMDGPU_CHUNK_ID_IB == 1 && AMDGPU_CHUNK_ID_SYNCOBJ_OUT == 5 && AMDGPU_CHUNK_ID_BO_HANDLES == 6);
// Resets (Linux amdgpu_drm.h): CTX op QUERY_STATE2 answers out.state.flags, a u64 at offset 0.
static_assert(AMDGPU_CTX_OP_QUERY_STATE2 == 4 && AMDGPU_CTX_QUERY2_FLAGS_RESET == 1 && AMDGPU_CTX_QUERY2_FLAGS_VRAMLOST == 2 &&
              AMDGPU_CTX_QUERY2_FLAGS_GUILTY == 4);
static_assert(offsetof(drm_amdgpu_ctx_out, state.flags) == 0 && sizeof(drm_amdgpu_ctx) == 16);

}  // namespace zinc::umq::uapi
