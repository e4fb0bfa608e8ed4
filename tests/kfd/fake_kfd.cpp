#include "tests/kfd/fake_kfd.h"

#include <sys/mman.h>

#include <cstring>

namespace zinc::kfd::testing {
namespace {

bool powerOfTwo(uint64_t v) { return v && !(v & (v - 1)); }

}  // namespace

int FakeKfd::open(const char* path, int) {
    if (path == kfdPath_) return kKfdFd;
    if (path == renderPath_) return kRenderFd;
    return fail(ENOENT);
}

int FakeKfd::close(int) {
    ++closedFds;
    return 0;
}

const FakeKfd::Allocation* FakeKfd::at(uint64_t va) const {
    for (const auto& [h, a] : allocations)
        if (a.va == va && a.mapped) return &a;
    return nullptr;
}

const FakeKfd::Allocation* FakeKfd::containing(uint64_t va) const {
    for (const auto& [h, a] : allocations)
        if (va >= a.va && va < a.va + a.size && a.mapped) return &a;
    return nullptr;
}

int FakeKfd::createQueue(uapi::create_queue_args& a) {
    // set_queue_properties_from_user
    if (a.queue_percentage > uapi::kMaxQueuePercentage || a.queue_priority > uapi::kMaxQueuePriority) return fail(EINVAL);
    if (a.queue_type != uapi::kQueueTypeCompute || a.gpu_id != gpuId_) return fail(EINVAL);
    // kfd_queue_acquire_buffers: rptr/wptr inside a 1-page mapping, the ring mapping exactly
    // ring_size, EOP and control stack equal to topology, CWSR at least topology and its mapping
    // exactly ALIGN((ctx + debug) * xcc, PAGE_SIZE).
    for (uint64_t p : {a.read_pointer_address, a.write_pointer_address}) {
        const Allocation* m = containing(p);
        if (!m || m->size != 4096) return fail(EINVAL);
    }
    const Allocation* ring = at(a.ring_base_address);
    if (!powerOfTwo(a.ring_size) || !ring || ring->size != a.ring_size) return fail(EINVAL);
    const Allocation* eop = at(a.eop_buffer_address);
    if (a.eop_buffer_size != kEopSize || !eop || eop->size != kEopSize) return fail(EINVAL);
    const Allocation* ctx = at(a.ctx_save_restore_address);
    if (a.ctl_stack_size != kCtlStackSize || a.ctx_save_restore_size < kCwsrSize || !ctx || ctx->size != kCtxSaveMapping)
        return fail(EINVAL);
    a.queue_id = nextQueue_++;
    // SOC15: type | gpu_id | byte offset of this queue's doorbell in the 2-page frame.
    a.doorbell_offset = uapi::kMmapTypeDoorbell | uapi::mmapGpuId(gpuId_) | (uint64_t(a.queue_id) * uapi::kDoorbellBytes);
    queues[a.queue_id] = a;
    return 0;
}

int FakeKfd::createEvent(uapi::create_event_args& a) {
    if (a.event_page_offset) {
        // The dGPU event page: a known BO, offered only once ("Event page is already set").
        if (eventPageSet_) return fail(EINVAL);
        const auto it = allocations.find(a.event_page_offset);
        if (it == allocations.end() || it->second.size < uint64_t(uapi::kSignalEventLimit) * 8) return fail(EINVAL);
        eventPageSet_ = true;
    }
    if (a.event_type == uapi::kEventSignal) {
        if (!eventPageSet_) return fail(EINVAL);  // our Linux path always brings the page first
        a.event_slot_index = nextSlot_++;
        a.event_id = a.event_slot_index;  // signal events: id == slot (kfd_events.c)
    } else {
        a.event_id = uapi::kSignalEventLimit + nextEvent_++;  // KFD_FIRST_NONSIGNAL_EVENT_ID
    }
    a.event_page_offset = uapi::kMmapTypeEvents | uapi::mmapGpuId(gpuId_);
    return 0;
}

int FakeKfd::ioctl(int fd, unsigned long request, void* arg) {
    if (fd != kKfdFd) return fail(ENOTTY);
    if (failNext && request == failNext) {
        failNext = 0;
        return fail(failErrno);
    }
    switch (uint32_t(request)) {
        case uapi::kIocGetVersion: {
            log.push_back("GET_VERSION");
            auto* a = static_cast<uapi::get_version_args*>(arg);
            *a = {1, 15};
            return 0;
        }
        case uapi::kIocAcquireVm: {
            log.push_back("ACQUIRE_VM");
            auto* a = static_cast<uapi::acquire_vm_args*>(arg);
            return a->drm_fd == uint32_t(kRenderFd) && a->gpu_id == gpuId_ ? 0 : fail(EINVAL);
        }
        case uapi::kIocRuntimeEnable: {
            log.push_back("RUNTIME_ENABLE");
            if (!queues.empty()) return fail(EEXIST);  // kfd_ioctl_runtime_enable
            static_cast<uapi::runtime_enable_args*>(arg)->capabilities_mask = 0;
            return 0;
        }
        case uapi::kIocGetProcessAperturesNew: {
            log.push_back("GET_PROCESS_APERTURES_NEW");
            auto* a = static_cast<uapi::get_process_apertures_new_args*>(arg);
            if (a->num_of_nodes < 1) return fail(EINVAL);
            auto* out = reinterpret_cast<uapi::process_device_apertures*>(a->kfd_process_device_apertures_ptr);
            *out = {};
            out->gpu_id = gpuId_;
            out->gpuvm_base = 0x1000000;        // what a gfx9+ dGPU reports: the 47-bit user range
            out->gpuvm_limit = 0x7FFFFFFFFFFFull;
            a->num_of_nodes = 1;
            return 0;
        }
        case uapi::kIocAllocMemoryOfGpu: {
            log.push_back("ALLOC_MEMORY_OF_GPU");
            auto* a = static_cast<uapi::alloc_memory_of_gpu_args*>(arg);
            const uint32_t types = a->flags & (uapi::kAllocVram | uapi::kAllocGtt | uapi::kAllocUserptr | uapi::kAllocDoorbell | uapi::kAllocMmioRemap);
            if (a->gpu_id != gpuId_ || !powerOfTwo(types) || a->size == 0 || a->size % 4096) return fail(EINVAL);
            if ((a->flags & uapi::kAllocDoorbell) && a->size != uapi::kDoorbellFrameBytes) return fail(EINVAL);
            a->handle = nextHandle_++;
            a->mmap_offset = a->handle << 20;
            allocations[a->handle] = {a->va_addr, a->size, a->mmap_offset, a->flags, false};
            return 0;
        }
        case uapi::kIocFreeMemoryOfGpu: {
            log.push_back("FREE_MEMORY_OF_GPU");
            auto* a = static_cast<uapi::free_memory_of_gpu_args*>(arg);
            return allocations.erase(a->handle) ? 0 : fail(EINVAL);
        }
        case uapi::kIocMapMemoryToGpu:
        case uapi::kIocUnmapMemoryFromGpu: {
            const bool map = request == uapi::kIocMapMemoryToGpu;
            log.push_back(map ? "MAP_MEMORY_TO_GPU" : "UNMAP_MEMORY_FROM_GPU");
            auto* a = static_cast<uapi::map_memory_to_gpu_args*>(arg);
            const auto it = allocations.find(a->handle);
            const auto* ids = reinterpret_cast<const uint32_t*>(a->device_ids_array_ptr);
            if (it == allocations.end() || a->n_devices != 1 || ids[0] != gpuId_) return fail(EINVAL);
            it->second.mapped = map;
            a->n_success = 1;
            return 0;
        }
        case uapi::kIocCreateQueue:
            log.push_back("CREATE_QUEUE");
            return createQueue(*static_cast<uapi::create_queue_args*>(arg));
        case uapi::kIocDestroyQueue: {
            log.push_back("DESTROY_QUEUE");
            return queues.erase(static_cast<uapi::destroy_queue_args*>(arg)->queue_id) ? 0 : fail(EINVAL);
        }
        case uapi::kIocCreateEvent:
            log.push_back("CREATE_EVENT");
            return createEvent(*static_cast<uapi::create_event_args*>(arg));
        case uapi::kIocDestroyEvent:
            log.push_back("DESTROY_EVENT");
            return 0;
        case uapi::kIocSetEvent:
            log.push_back("SET_EVENT");
            signalled.insert(static_cast<uapi::set_event_args*>(arg)->event_id);
            return 0;
        case uapi::kIocWaitEvents: {
            log.push_back("WAIT_EVENTS");
            auto* a = static_cast<uapi::wait_events_args*>(arg);
            const auto* events = reinterpret_cast<const uapi::event_data*>(a->events_ptr);
            a->wait_result = uapi::kWaitTimeout;
            for (uint32_t i = 0; i < a->num_events; ++i)
                if (signalled.erase(events[i].event_id)) a->wait_result = uapi::kWaitComplete;
            return 0;
        }
    }
    return fail(ENOTTY);
}

void* FakeKfd::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
    if (fd == -1) return ::mmap(addr, length, prot, flags, fd, offset);  // address-space reservations
    const uint64_t off = uint64_t(offset);
    bool known = false;
    if (fd == kRenderFd) {
        for (const auto& [h, a] : allocations) known |= a.mmapOffset == off && a.va == uint64_t(addr) && a.size == length;
    } else if (fd == kKfdFd) {
        // kfd_doorbell_mmap: exactly the 2-page frame of this GPU.
        known = off == (uapi::kMmapTypeDoorbell | uapi::mmapGpuId(gpuId_)) && length == uapi::kDoorbellFrameBytes;
    }
    if (!known || !(flags & MAP_FIXED)) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    return ::mmap(addr, length, prot, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int FakeKfd::munmap(void* addr, size_t length) { return ::munmap(addr, length); }

}  // namespace zinc::kfd::testing
