#pragma once
// The slice of the KFD ioctl ABI (/dev/kfd) this runtime uses, defined here rather than taken
// from <linux/kfd_ioctl.h>: Debian 12 ships KFD 1.11 headers (linux-libc-dev 6.1), which lack
// the UNCACHED/EXT_COHERENT flags and the signal-event age, and we want the layouts pinned by
// static_asserts instead of whatever header a build machine has.
//
// Source: Linux include/uapi/linux/kfd_ioctl.h, torvalds/linux @100c85421b52 (KFD_IOCTL
// 1.15), cross-checked with the 1.17 copy in tinygrad (autogen/kfd.py) and Debian's 1.11 header
// for the structs that did not change (FACTS.md §5.1-5.3). The mmap-offset encoding is not
// UAPI: it comes from drivers/gpu/drm/amd/amdkfd/kfd_priv.h (KFD_MMAP_*), same versions.
//
// Names follow the kernel's, less the kfd_ioctl_ prefix, so a grep for the kernel name finds
// them. Every struct is checked for size and every field offset below.
#include <cstddef>
#include <cstdint>

namespace zinc::kfd::uapi {

// ---- ioctl encoding (include/uapi/asm-generic/ioctl.h: nr 8 bits, type 8, size 14, dir 2) --
inline constexpr uint32_t kIocNone = 0, kIocWrite = 1, kIocRead = 2;
constexpr uint32_t ioc(uint32_t dir, uint32_t nr, uint32_t size) {
    constexpr uint32_t kType = 'K';  // AMDKFD_IOCTL_BASE
    return (dir << 30) | (size << 16) | (kType << 8) | nr;
}
template <class T> constexpr uint32_t ior(uint32_t nr) { return ioc(kIocRead, nr, sizeof(T)); }
template <class T> constexpr uint32_t iow(uint32_t nr) { return ioc(kIocWrite, nr, sizeof(T)); }
template <class T> constexpr uint32_t iowr(uint32_t nr) { return ioc(kIocRead | kIocWrite, nr, sizeof(T)); }

// ---- structs -------------------------------------------------------------------------------
struct get_version_args {
    uint32_t major_version;  // from KFD
    uint32_t minor_version;  // from KFD
};

// queue_type values (KFD_IOC_QUEUE_TYPE_*). COMPUTE is a PM4 ring; AQL is the HSA packet format.
inline constexpr uint32_t kQueueTypeCompute = 0x0;
inline constexpr uint32_t kQueueTypeSdma = 0x1;
inline constexpr uint32_t kQueueTypeComputeAql = 0x2;
inline constexpr uint32_t kQueueTypeSdmaXgmi = 0x3;
inline constexpr uint32_t kMaxQueuePercentage = 100;  // KFD_MAX_QUEUE_PERCENTAGE
inline constexpr uint32_t kMaxQueuePriority = 15;     // KFD_MAX_QUEUE_PRIORITY

// The 1.15 layout (88 bytes). KFD 1.17 appends sdma_engine_id + pad (96 bytes); kfd_ioctl()
// copies in the caller's size and zero-fills up to its own, so 88 bytes works on every kernel
// since 1.11 (kfd_chardev.c kfd_ioctl, FACTS.md §5.1).
struct create_queue_args {
    uint64_t ring_base_address;         // to KFD
    uint64_t write_pointer_address;     // to KFD (the header says "from"; the kernel reads it)
    uint64_t read_pointer_address;      // to KFD (idem)
    uint64_t doorbell_offset;           // from KFD: mmap offset of this queue's doorbell
    uint32_t ring_size;                 // to KFD, bytes, power of two
    uint32_t gpu_id;                    // to KFD
    uint32_t queue_type;                // to KFD
    uint32_t queue_percentage;          // to KFD
    uint32_t queue_priority;            // to KFD
    uint32_t queue_id;                  // from KFD
    uint64_t eop_buffer_address;        // to KFD
    uint64_t eop_buffer_size;           // to KFD
    uint64_t ctx_save_restore_address;  // to KFD
    uint32_t ctx_save_restore_size;     // to KFD
    uint32_t ctl_stack_size;            // to KFD
};

struct destroy_queue_args {
    uint32_t queue_id;  // to KFD
    uint32_t pad;
};

struct process_device_apertures {  // kfd_process_device_apertures
    uint64_t lds_base;
    uint64_t lds_limit;
    uint64_t scratch_base;
    uint64_t scratch_limit;
    uint64_t gpuvm_base;
    uint64_t gpuvm_limit;
    uint32_t gpu_id;
    uint32_t pad;
};

struct get_process_apertures_new_args {
    uint64_t kfd_process_device_apertures_ptr;  // user array of process_device_apertures
    uint32_t num_of_nodes;                       // in: capacity, out: entries filled
    uint32_t pad;
};

// event_type values (KFD_IOC_EVENT_*, "matching HSA_EVENTTYPE").
inline constexpr uint32_t kEventSignal = 0;
inline constexpr uint32_t kEventNodeChange = 1;
inline constexpr uint32_t kEventDeviceStateChange = 2;
inline constexpr uint32_t kEventHwException = 3;
inline constexpr uint32_t kEventSystemEvent = 4;
inline constexpr uint32_t kEventDebugEvent = 5;
inline constexpr uint32_t kEventProfileEvent = 6;
inline constexpr uint32_t kEventQueueEvent = 7;
inline constexpr uint32_t kEventMemory = 8;
// wait_result values (KFD_IOC_WAIT_RESULT_*).
inline constexpr uint32_t kWaitComplete = 0;
inline constexpr uint32_t kWaitTimeout = 1;
inline constexpr uint32_t kWaitFail = 2;
inline constexpr uint32_t kSignalEventLimit = 4096;  // KFD_SIGNAL_EVENT_LIMIT: slots in the event page
// WAIT_EVENTS timeout is in milliseconds; this value waits forever (kfd_events.c
// user_timeout_to_jiffies). We never pass it: every wait in zinc-rt is bounded.
inline constexpr uint32_t kWaitInfinite = 0xFFFFFFFF;

struct create_event_args {
    uint64_t event_page_offset;   // to KFD on the first call (dGPU: handle of the event-page BO); from KFD
    uint32_t event_trigger_data;  // from KFD, signal events only
    uint32_t event_type;          // to KFD
    uint32_t auto_reset;          // to KFD
    uint32_t node_id;             // to KFD, only some event types
    uint32_t event_id;            // from KFD
    uint32_t event_slot_index;    // from KFD: mailbox slot in the event page (8 bytes each)
};

struct destroy_event_args {
    uint32_t event_id;
    uint32_t pad;
};
struct set_event_args {
    uint32_t event_id;
    uint32_t pad;
};
struct reset_event_args {
    uint32_t event_id;
    uint32_t pad;
};

struct memory_exception_failure {  // kfd_memory_exception_failure
    uint32_t NotPresent;
    uint32_t ReadOnly;
    uint32_t NoExecute;
    uint32_t imprecise;
};
struct hsa_memory_exception_data {
    memory_exception_failure failure;
    uint64_t va;
    uint32_t gpu_id;
    uint32_t ErrorType;  // 1.14+: 0 no RAS error, 1 SRAM ECC, 2 poison, 3 GPU hang
};
struct hsa_hw_exception_data {
    uint32_t reset_type;
    uint32_t reset_cause;
    uint32_t memory_lost;
    uint32_t gpu_id;
};
struct hsa_signal_event_data {
    uint64_t last_event_age;  // 1.14+: to and from KFD
};
struct event_data {  // kfd_event_data
    union {
        hsa_memory_exception_data memory_exception_data;
        hsa_hw_exception_data hw_exception_data;
        hsa_signal_event_data signal_event_data;
    };
    uint64_t kfd_event_data_ext;
    uint32_t event_id;  // to KFD
    uint32_t pad;
};

struct wait_events_args {
    uint64_t events_ptr;    // array of event_data
    uint32_t num_events;
    uint32_t wait_for_all;
    uint32_t timeout;       // milliseconds
    uint32_t wait_result;   // from KFD: kWait*
};

struct acquire_vm_args {
    uint32_t drm_fd;  // the render node's fd
    uint32_t gpu_id;
};

// ALLOC_MEMORY_OF_GPU flags (KFD_IOC_ALLOC_MEM_FLAGS_*): one memory type ...
inline constexpr uint32_t kAllocVram = 1u << 0;
inline constexpr uint32_t kAllocGtt = 1u << 1;
inline constexpr uint32_t kAllocUserptr = 1u << 2;
inline constexpr uint32_t kAllocDoorbell = 1u << 3;
inline constexpr uint32_t kAllocMmioRemap = 1u << 4;
// ... plus attributes.
inline constexpr uint32_t kAllocExtCoherent = 1u << 24;
inline constexpr uint32_t kAllocUncached = 1u << 25;
inline constexpr uint32_t kAllocCoherent = 1u << 26;
inline constexpr uint32_t kAllocAqlQueueMem = 1u << 27;
inline constexpr uint32_t kAllocNoSubstitute = 1u << 28;
inline constexpr uint32_t kAllocPublic = 1u << 29;
inline constexpr uint32_t kAllocExecutable = 1u << 30;
inline constexpr uint32_t kAllocWritable = 1u << 31;

struct alloc_memory_of_gpu_args {
    uint64_t va_addr;      // to KFD: the GPU VA every later mapping uses
    uint64_t size;         // to KFD
    uint64_t handle;       // from KFD
    uint64_t mmap_offset;  // to KFD (USERPTR: the CPU address); from KFD: render-node mmap offset
    uint32_t gpu_id;       // to KFD
    uint32_t flags;        // kAlloc*
};

struct free_memory_of_gpu_args {
    uint64_t handle;
};

// MAP and UNMAP share one layout. n_success counts devices done; start it at 0.
struct map_memory_to_gpu_args {
    uint64_t handle;
    uint64_t device_ids_array_ptr;  // array of u32 gpu_ids
    uint32_t n_devices;
    uint32_t n_success;
};
using unmap_memory_from_gpu_args = map_memory_to_gpu_args;

// RUNTIME_ENABLE (KFD 1.13+, the debugger API): tells KFD the runtime is up. tinygrad calls it
// with mode 0 before creating queues when KFD >= 1.14 (FACTS.md §5.8); it fails with EBUSY when
// already pending and EEXIST once user queues exist, so it must come first.
struct runtime_enable_args {
    uint64_t r_debug;            // address of the runtime's r_debug (0: none)
    uint32_t mode_mask;          // bit 0 ENABLE, bit 1 TTMP_SAVE
    uint32_t capabilities_mask;  // from KFD
};

// ---- ioctl numbers (AMDKFD_IOC_*) -----------------------------------------------------------
inline constexpr uint32_t kIocGetVersion = ior<get_version_args>(0x01);
inline constexpr uint32_t kIocCreateQueue = iowr<create_queue_args>(0x02);
inline constexpr uint32_t kIocDestroyQueue = iowr<destroy_queue_args>(0x03);
inline constexpr uint32_t kIocCreateEvent = iowr<create_event_args>(0x08);
inline constexpr uint32_t kIocDestroyEvent = iow<destroy_event_args>(0x09);
inline constexpr uint32_t kIocSetEvent = iow<set_event_args>(0x0A);
inline constexpr uint32_t kIocResetEvent = iow<reset_event_args>(0x0B);
inline constexpr uint32_t kIocWaitEvents = iowr<wait_events_args>(0x0C);
inline constexpr uint32_t kIocGetProcessAperturesNew = iowr<get_process_apertures_new_args>(0x14);
inline constexpr uint32_t kIocAcquireVm = iow<acquire_vm_args>(0x15);
inline constexpr uint32_t kIocAllocMemoryOfGpu = iowr<alloc_memory_of_gpu_args>(0x16);
inline constexpr uint32_t kIocFreeMemoryOfGpu = iow<free_memory_of_gpu_args>(0x17);
inline constexpr uint32_t kIocMapMemoryToGpu = iowr<map_memory_to_gpu_args>(0x18);
inline constexpr uint32_t kIocUnmapMemoryFromGpu = iowr<unmap_memory_from_gpu_args>(0x19);
inline constexpr uint32_t kIocRuntimeEnable = iowr<runtime_enable_args>(0x25);

// ---- mmap offsets (kfd_priv.h, not UAPI) ----------------------------------------------------
// Bits 63:62 type, 61:46 gpu_id, 45:0 offset. The doorbell_offset CREATE_QUEUE returns already
// carries type and gpu_id; user space maps the process's doorbell frame from /dev/kfd at that
// offset rounded down to the frame (FACTS.md §5.4).
inline constexpr unsigned kMmapTypeShift = 62;
inline constexpr uint64_t kMmapTypeMask = 0x3ull << kMmapTypeShift;
inline constexpr uint64_t kMmapTypeDoorbell = 0x3ull << kMmapTypeShift;
inline constexpr uint64_t kMmapTypeEvents = 0x2ull << kMmapTypeShift;
inline constexpr uint64_t kMmapTypeReservedMem = 0x1ull << kMmapTypeShift;
inline constexpr uint64_t kMmapTypeMmio = 0x0ull << kMmapTypeShift;
inline constexpr unsigned kMmapGpuIdShift = 46;
inline constexpr unsigned kGpuIdHashWidth = 16;  // KFD_GPU_ID_HASH_WIDTH
inline constexpr uint64_t kMmapGpuIdMask = ((1ull << kGpuIdHashWidth) - 1) << kMmapGpuIdShift;
constexpr uint64_t mmapGpuId(uint32_t gpuId) { return (uint64_t(gpuId) << kMmapGpuIdShift) & kMmapGpuIdMask; }
constexpr uint32_t mmapGetGpuId(uint64_t offset) { return uint32_t((offset & kMmapGpuIdMask) >> kMmapGpuIdShift); }

// The per-process doorbell frame on SOC15 and later (gfx9+, so gfx11/gfx12): 2 pages of 8-byte
// doorbells (kfd_device.c kfd_device_info_init: doorbell_size 8; kfd_doorbell.c frame comment).
inline constexpr uint64_t kDoorbellFrameBytes = 0x2000;
inline constexpr uint32_t kDoorbellBytes = 8;

// ---- layout checks: sizes from the header comments and FACTS.md §5.2, offsets from the kernel's
// field order with natural alignment. A failure here means the ABI drifted from the source. ----
#define ZINC_KFD_AT(type, field, off) static_assert(offsetof(type, field) == (off), #type "." #field)
static_assert(sizeof(get_version_args) == 8);
ZINC_KFD_AT(get_version_args, minor_version, 4);
static_assert(sizeof(create_queue_args) == 88);
ZINC_KFD_AT(create_queue_args, write_pointer_address, 8);
ZINC_KFD_AT(create_queue_args, read_pointer_address, 16);
ZINC_KFD_AT(create_queue_args, doorbell_offset, 24);
ZINC_KFD_AT(create_queue_args, ring_size, 32);
ZINC_KFD_AT(create_queue_args, gpu_id, 36);
ZINC_KFD_AT(create_queue_args, queue_type, 40);
ZINC_KFD_AT(create_queue_args, queue_percentage, 44);
ZINC_KFD_AT(create_queue_args, queue_priority, 48);
ZINC_KFD_AT(create_queue_args, queue_id, 52);
ZINC_KFD_AT(create_queue_args, eop_buffer_address, 56);
ZINC_KFD_AT(create_queue_args, eop_buffer_size, 64);
ZINC_KFD_AT(create_queue_args, ctx_save_restore_address, 72);
ZINC_KFD_AT(create_queue_args, ctx_save_restore_size, 80);
ZINC_KFD_AT(create_queue_args, ctl_stack_size, 84);
static_assert(sizeof(destroy_queue_args) == 8);
static_assert(sizeof(process_device_apertures) == 56);
ZINC_KFD_AT(process_device_apertures, gpuvm_base, 32);
ZINC_KFD_AT(process_device_apertures, gpuvm_limit, 40);
ZINC_KFD_AT(process_device_apertures, gpu_id, 48);
static_assert(sizeof(get_process_apertures_new_args) == 16);
ZINC_KFD_AT(get_process_apertures_new_args, num_of_nodes, 8);
static_assert(sizeof(create_event_args) == 32);
ZINC_KFD_AT(create_event_args, event_trigger_data, 8);
ZINC_KFD_AT(create_event_args, event_type, 12);
ZINC_KFD_AT(create_event_args, auto_reset, 16);
ZINC_KFD_AT(create_event_args, node_id, 20);
ZINC_KFD_AT(create_event_args, event_id, 24);
ZINC_KFD_AT(create_event_args, event_slot_index, 28);
static_assert(sizeof(destroy_event_args) == 8 && sizeof(set_event_args) == 8 && sizeof(reset_event_args) == 8);
static_assert(sizeof(hsa_memory_exception_data) == 32);
ZINC_KFD_AT(hsa_memory_exception_data, va, 16);
ZINC_KFD_AT(hsa_memory_exception_data, gpu_id, 24);
static_assert(sizeof(hsa_hw_exception_data) == 16);
static_assert(sizeof(event_data) == 48);
ZINC_KFD_AT(event_data, kfd_event_data_ext, 32);
ZINC_KFD_AT(event_data, event_id, 40);
static_assert(sizeof(wait_events_args) == 24);
ZINC_KFD_AT(wait_events_args, num_events, 8);
ZINC_KFD_AT(wait_events_args, wait_for_all, 12);
ZINC_KFD_AT(wait_events_args, timeout, 16);
ZINC_KFD_AT(wait_events_args, wait_result, 20);
static_assert(sizeof(acquire_vm_args) == 8);
ZINC_KFD_AT(acquire_vm_args, gpu_id, 4);
static_assert(sizeof(alloc_memory_of_gpu_args) == 40);
ZINC_KFD_AT(alloc_memory_of_gpu_args, size, 8);
ZINC_KFD_AT(alloc_memory_of_gpu_args, handle, 16);
ZINC_KFD_AT(alloc_memory_of_gpu_args, mmap_offset, 24);
ZINC_KFD_AT(alloc_memory_of_gpu_args, gpu_id, 32);
ZINC_KFD_AT(alloc_memory_of_gpu_args, flags, 36);
static_assert(sizeof(free_memory_of_gpu_args) == 8);
static_assert(sizeof(map_memory_to_gpu_args) == 24);
ZINC_KFD_AT(map_memory_to_gpu_args, device_ids_array_ptr, 8);
ZINC_KFD_AT(map_memory_to_gpu_args, n_devices, 16);
ZINC_KFD_AT(map_memory_to_gpu_args, n_success, 20);
static_assert(sizeof(runtime_enable_args) == 16);
ZINC_KFD_AT(runtime_enable_args, mode_mask, 8);
ZINC_KFD_AT(runtime_enable_args, capabilities_mask, 12);
#undef ZINC_KFD_AT

// The encoded numbers, as computed in FACTS.md §5.1 and checked there against Debian's macros.
static_assert(kIocGetVersion == 0x80084B01);
static_assert(kIocCreateQueue == 0xC0584B02);
static_assert(kIocDestroyQueue == 0xC0084B03);
static_assert(kIocCreateEvent == 0xC0204B08);
static_assert(kIocDestroyEvent == 0x40084B09);
static_assert(kIocSetEvent == 0x40084B0A);
static_assert(kIocResetEvent == 0x40084B0B);
static_assert(kIocWaitEvents == 0xC0184B0C);
static_assert(kIocGetProcessAperturesNew == 0xC0104B14);
static_assert(kIocAcquireVm == 0x40084B15);
static_assert(kIocAllocMemoryOfGpu == 0xC0284B16);
static_assert(kIocFreeMemoryOfGpu == 0x40084B17);
static_assert(kIocMapMemoryToGpu == 0xC0184B18);
static_assert(kIocUnmapMemoryFromGpu == 0xC0184B19);
static_assert(kIocRuntimeEnable == 0xC0104B25);

}  // namespace zinc::kfd::uapi
