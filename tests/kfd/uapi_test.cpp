// Rung 0 of the ladder: our KFD structs are the kernel's. kfd_uapi.h pins sizes and offsets with
// static_asserts taken from the 1.15 header; here they are checked once more against an
// independent copy, the KFD 1.11 header Debian installs (<linux/kfd_ioctl.h>), for every struct
// and ioctl number that did not change between 1.11 and 1.15.
#include <linux/kfd_ioctl.h>

#include <cstddef>

#include <gtest/gtest.h>

#include "kfd/device/caps.h"
#include "kfd/device/kfd_uapi.h"

namespace zinc::kfd {
namespace {

#define EXPECT_SAME_LAYOUT(ours, theirs, field) \
    EXPECT_EQ(offsetof(uapi::ours, field), offsetof(theirs, field)) << #ours "." #field

TEST(Kfd, StructLayoutsMatchUapi) {
    EXPECT_EQ(sizeof(uapi::get_version_args), sizeof(kfd_ioctl_get_version_args));
    EXPECT_EQ(sizeof(uapi::create_queue_args), sizeof(kfd_ioctl_create_queue_args));
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, ring_base_address);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, write_pointer_address);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, read_pointer_address);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, doorbell_offset);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, ring_size);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, gpu_id);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, queue_type);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, queue_percentage);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, queue_priority);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, queue_id);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, eop_buffer_address);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, eop_buffer_size);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, ctx_save_restore_address);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, ctx_save_restore_size);
    EXPECT_SAME_LAYOUT(create_queue_args, kfd_ioctl_create_queue_args, ctl_stack_size);
    EXPECT_EQ(sizeof(uapi::destroy_queue_args), sizeof(kfd_ioctl_destroy_queue_args));
    EXPECT_EQ(sizeof(uapi::process_device_apertures), sizeof(kfd_process_device_apertures));
    EXPECT_SAME_LAYOUT(process_device_apertures, kfd_process_device_apertures, gpuvm_base);
    EXPECT_SAME_LAYOUT(process_device_apertures, kfd_process_device_apertures, gpu_id);
    EXPECT_EQ(sizeof(uapi::get_process_apertures_new_args), sizeof(kfd_ioctl_get_process_apertures_new_args));
    EXPECT_SAME_LAYOUT(get_process_apertures_new_args, kfd_ioctl_get_process_apertures_new_args, num_of_nodes);
    EXPECT_EQ(sizeof(uapi::create_event_args), sizeof(kfd_ioctl_create_event_args));
    EXPECT_SAME_LAYOUT(create_event_args, kfd_ioctl_create_event_args, event_page_offset);
    EXPECT_SAME_LAYOUT(create_event_args, kfd_ioctl_create_event_args, event_trigger_data);
    EXPECT_SAME_LAYOUT(create_event_args, kfd_ioctl_create_event_args, event_type);
    EXPECT_SAME_LAYOUT(create_event_args, kfd_ioctl_create_event_args, auto_reset);
    EXPECT_SAME_LAYOUT(create_event_args, kfd_ioctl_create_event_args, node_id);
    EXPECT_SAME_LAYOUT(create_event_args, kfd_ioctl_create_event_args, event_id);
    EXPECT_SAME_LAYOUT(create_event_args, kfd_ioctl_create_event_args, event_slot_index);
    EXPECT_EQ(sizeof(uapi::destroy_event_args), sizeof(kfd_ioctl_destroy_event_args));
    EXPECT_EQ(sizeof(uapi::set_event_args), sizeof(kfd_ioctl_set_event_args));
    EXPECT_EQ(sizeof(uapi::event_data), sizeof(kfd_event_data));
    EXPECT_SAME_LAYOUT(event_data, kfd_event_data, kfd_event_data_ext);
    EXPECT_SAME_LAYOUT(event_data, kfd_event_data, event_id);
    EXPECT_EQ(offsetof(uapi::hsa_memory_exception_data, va), offsetof(kfd_hsa_memory_exception_data, va));
    EXPECT_EQ(sizeof(uapi::wait_events_args), sizeof(kfd_ioctl_wait_events_args));
    EXPECT_SAME_LAYOUT(wait_events_args, kfd_ioctl_wait_events_args, num_events);
    EXPECT_SAME_LAYOUT(wait_events_args, kfd_ioctl_wait_events_args, wait_for_all);
    EXPECT_SAME_LAYOUT(wait_events_args, kfd_ioctl_wait_events_args, timeout);
    EXPECT_SAME_LAYOUT(wait_events_args, kfd_ioctl_wait_events_args, wait_result);
    EXPECT_EQ(sizeof(uapi::acquire_vm_args), sizeof(kfd_ioctl_acquire_vm_args));
    EXPECT_EQ(sizeof(uapi::alloc_memory_of_gpu_args), sizeof(kfd_ioctl_alloc_memory_of_gpu_args));
    EXPECT_SAME_LAYOUT(alloc_memory_of_gpu_args, kfd_ioctl_alloc_memory_of_gpu_args, handle);
    EXPECT_SAME_LAYOUT(alloc_memory_of_gpu_args, kfd_ioctl_alloc_memory_of_gpu_args, mmap_offset);
    EXPECT_SAME_LAYOUT(alloc_memory_of_gpu_args, kfd_ioctl_alloc_memory_of_gpu_args, gpu_id);
    EXPECT_SAME_LAYOUT(alloc_memory_of_gpu_args, kfd_ioctl_alloc_memory_of_gpu_args, flags);
    EXPECT_EQ(sizeof(uapi::free_memory_of_gpu_args), sizeof(kfd_ioctl_free_memory_of_gpu_args));
    EXPECT_EQ(sizeof(uapi::map_memory_to_gpu_args), sizeof(kfd_ioctl_map_memory_to_gpu_args));
    EXPECT_SAME_LAYOUT(map_memory_to_gpu_args, kfd_ioctl_map_memory_to_gpu_args, n_success);
    EXPECT_EQ(sizeof(uapi::unmap_memory_from_gpu_args), sizeof(kfd_ioctl_unmap_memory_from_gpu_args));
}

TEST(Kfd, IoctlNumbersMatchUapi) {
    EXPECT_EQ(uapi::kIocGetVersion, uint32_t(AMDKFD_IOC_GET_VERSION));
    EXPECT_EQ(uapi::kIocCreateQueue, uint32_t(AMDKFD_IOC_CREATE_QUEUE));
    EXPECT_EQ(uapi::kIocDestroyQueue, uint32_t(AMDKFD_IOC_DESTROY_QUEUE));
    EXPECT_EQ(uapi::kIocCreateEvent, uint32_t(AMDKFD_IOC_CREATE_EVENT));
    EXPECT_EQ(uapi::kIocDestroyEvent, uint32_t(AMDKFD_IOC_DESTROY_EVENT));
    EXPECT_EQ(uapi::kIocSetEvent, uint32_t(AMDKFD_IOC_SET_EVENT));
    EXPECT_EQ(uapi::kIocResetEvent, uint32_t(AMDKFD_IOC_RESET_EVENT));
    EXPECT_EQ(uapi::kIocWaitEvents, uint32_t(AMDKFD_IOC_WAIT_EVENTS));
    EXPECT_EQ(uapi::kIocGetProcessAperturesNew, uint32_t(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW));
    EXPECT_EQ(uapi::kIocAcquireVm, uint32_t(AMDKFD_IOC_ACQUIRE_VM));
    EXPECT_EQ(uapi::kIocAllocMemoryOfGpu, uint32_t(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU));
    EXPECT_EQ(uapi::kIocFreeMemoryOfGpu, uint32_t(AMDKFD_IOC_FREE_MEMORY_OF_GPU));
    EXPECT_EQ(uapi::kIocMapMemoryToGpu, uint32_t(AMDKFD_IOC_MAP_MEMORY_TO_GPU));
    EXPECT_EQ(uapi::kIocUnmapMemoryFromGpu, uint32_t(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU));
}

TEST(Kfd, AllocFlagsAndQueueTypesMatchUapi) {
    EXPECT_EQ(uapi::kAllocVram, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_VRAM));
    EXPECT_EQ(uapi::kAllocGtt, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_GTT));
    EXPECT_EQ(uapi::kAllocUserptr, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_USERPTR));
    EXPECT_EQ(uapi::kAllocDoorbell, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL));
    EXPECT_EQ(uapi::kAllocMmioRemap, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP));
    EXPECT_EQ(uapi::kAllocWritable, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE));
    EXPECT_EQ(uapi::kAllocExecutable, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE));
    EXPECT_EQ(uapi::kAllocPublic, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC));
    EXPECT_EQ(uapi::kAllocNoSubstitute, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE));
    EXPECT_EQ(uapi::kAllocAqlQueueMem, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM));
    EXPECT_EQ(uapi::kAllocCoherent, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_COHERENT));
    EXPECT_EQ(uapi::kAllocUncached, uint32_t(KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED));
    EXPECT_EQ(uapi::kQueueTypeCompute, uint32_t(KFD_IOC_QUEUE_TYPE_COMPUTE));
    EXPECT_EQ(uapi::kQueueTypeComputeAql, uint32_t(KFD_IOC_QUEUE_TYPE_COMPUTE_AQL));
    EXPECT_EQ(uapi::kEventSignal, uint32_t(KFD_IOC_EVENT_SIGNAL));
    EXPECT_EQ(uapi::kEventMemory, uint32_t(KFD_IOC_EVENT_MEMORY));
    EXPECT_EQ(uapi::kEventHwException, uint32_t(KFD_IOC_EVENT_HW_EXCEPTION));
    EXPECT_EQ(uapi::kWaitTimeout, uint32_t(KFD_IOC_WAIT_RESULT_TIMEOUT));
    EXPECT_EQ(uapi::kSignalEventLimit, uint32_t(KFD_SIGNAL_EVENT_LIMIT));
}

TEST(Kfd, DoorbellMmapOffsetEncoding) {
    // FACTS.md §5.4 worked example: gpu_id 0x1234, in-frame offset 8.
    const uint64_t offset = uapi::kMmapTypeDoorbell | uapi::mmapGpuId(0x1234) | 8;
    EXPECT_EQ(offset, 0xC48D000000000008ull);
    EXPECT_EQ(offset & ~(uapi::kDoorbellFrameBytes - 1), 0xC48D000000000000ull);
    EXPECT_EQ(uapi::mmapGetGpuId(offset), 0x1234u);
}

TEST(Kfd, QueueBufferSizesFollowKfdFormula) {
    // FACTS.md §5.5 worked example: a 96-CU gfx1100-class part.
    const QueueBufferSizes s = queueBufferSizes(110000, 96, 1);
    EXPECT_EQ(s.ctlStackBytes, 0xA000u);
    EXPECT_EQ(s.ctxSaveBytes, 0x2BEA000u);
    EXPECT_EQ(s.debugMemoryBytes, 0x18000u);
    EXPECT_EQ(s.ctxSaveMappingBytes, 0x2C02000u);
    EXPECT_EQ(s.eopBytes, 4096u);
    // gfx1151 (110501) has the smaller VRGP file per CU.
    EXPECT_LT(queueBufferSizes(110501, 96, 1).ctxSaveBytes, s.ctxSaveBytes);
}

TEST(Kfd, GfxNamesRoundTrip) {
    EXPECT_EQ(gfxNameFromTargetVersion(110000), "gfx1100");
    EXPECT_EQ(gfxNameFromTargetVersion(120001), "gfx1201");
    EXPECT_EQ(gfxNameFromTargetVersion(110501), "gfx1151");
    EXPECT_EQ(gfxNameFromTargetVersion(90010), "gfx90a");
    EXPECT_EQ(targetVersionFromGfxName("gfx1100").value(), 110000u);
    EXPECT_EQ(targetVersionFromGfxName("gfx90a").value(), 90010u);
    EXPECT_FALSE(targetVersionFromGfxName("sm_90").ok());
    EXPECT_FALSE(targetVersionFromGfxName("gfx").ok());
}

}  // namespace
}  // namespace zinc::kfd
