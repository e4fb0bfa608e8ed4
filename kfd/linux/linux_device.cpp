// kfd::Device over Linux /dev/kfd: the ioctl sequence of an independent KFD runtime (tinygrad
// KFDIface, FACTS.md §5.8): topology -> open /dev/kfd -> GET_VERSION -> open the render node ->
// ACQUIRE_VM -> event page + exception events -> allocations -> CREATE_QUEUE.
// Not yet run on hardware: this machine has no AMD GPU (tiers.md).
#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "kfd/device/device.h"
#include "kfd/device/kfd_uapi.h"
#include "kfd/device/syscalls.h"
#include "kfd/linux/host_gpus.h"
#include "kfd/linux/linux_device.h"
#include "kfd/linux/topology.h"
#include "kfd/device/hex.h"

namespace zinc::kfd {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// One ioctl, retried while the kernel says "interrupted, try again" (libhsakmt kmtIoctl does
// the same); any other failure keeps its errno.
Status kfdIoctl(Syscalls& sys, int fd, uint32_t request, void* arg, const char* name, const std::string& what) {
    int rc;
    do {
        rc = sys.ioctl(fd, request, arg);
    } while (rc == -1 && (errno == EINTR || errno == EAGAIN));
    if (rc == -1) return errnoError(name, what);
    return {};
}

class LinuxDevice final : public Device {
public:
    LinuxDevice(Syscalls& sys, int kfd, GpuCaps caps, uapi::get_version_args version)
        : sys_(sys), kfd_(kfd), caps_(std::move(caps)), version_(version) {}
    ~LinuxDevice() override;

    Status attach(const LinuxOptions& options);

    std::string name() const override {
        return "linux /dev/kfd " + std::to_string(version_.major_version) + "." + std::to_string(version_.minor_version) +
               ", node " + std::to_string(caps_.nodeIndex) + " (gpu_id " + hex(caps_.gpuId) + ", " + caps_.gfxName + ")";
    }
    const GpuCaps& caps() const override { return caps_; }

    Result<Memory> allocMemory(uint64_t size, MemoryKind kind, AllocOptions options) override;
    Status freeMemory(Memory& memory) override;
    Result<Queue> createQueue(const QueueOptions& options) override;
    Status destroyQueue(Queue& queue) override;
    Result<Event> createEvent(bool autoReset) override;
    Status destroyEvent(Event& event) override;
    Status setEvent(const Event& event) override;
    Status waitEvents(std::span<const Event> events, uint32_t timeoutMs, bool waitAll) override;
    QueueState readQueueState(const Queue& queue) const override;

protected:
    void doorbellRung(const Queue& queue) override {
        std::lock_guard lock(mutex_);
        lastDoorbell_[queue.id] = *queue.doorbell;
    }

private:
    Status mapToGpu(uint64_t handle, bool map);
    Result<Event> createKfdEvent(uint32_t type, bool autoReset);
    std::string exceptionReport(const uapi::event_data& data, uint32_t type) const;

    Syscalls& sys_;
    int kfd_ = -1;
    int drm_ = -1;
    GpuCaps caps_;
    uapi::get_version_args version_{};
    Memory doorbellFrame_;  // the process's doorbell pages, mapped lazily with the first queue
    Memory eventPage_;      // signal-event mailboxes (dGPU: user-allocated, FACTS.md §5.7)
    bool eventPageRegistered_ = false;  // handed to KFD with the first signal event
    uint64_t gpuvmBase_ = 0, gpuvmLimit_ = 0;  // from GET_PROCESS_APERTURES_NEW
    Event memoryEvent_, hwExceptionEvent_;  // GPU faults end every wait (tinygrad waits on both)
    mutable std::mutex mutex_;
    std::map<uint32_t, Queue> queues_;
    std::map<uint32_t, uint64_t> lastDoorbell_;
};

LinuxDevice::~LinuxDevice() {
    for (auto& [id, queue] : std::map<uint32_t, Queue>(queues_)) (void)destroyQueue(queue);
    if (memoryEvent_.id) (void)destroyEvent(memoryEvent_);
    if (hwExceptionEvent_.id) (void)destroyEvent(hwExceptionEvent_);
    if (doorbellFrame_) (void)freeMemory(doorbellFrame_);
    // The event page stays registered with KFD until the fd closes: closing releases the BO
    // with the process's KFD state; only our CPU mapping is left to drop.
    if (drm_ >= 0) sys_.close(drm_);
    if (kfd_ >= 0) sys_.close(kfd_);
    if (eventPage_) sys_.munmap(eventPage_.cpuPtr, eventPage_.size);
}

Status LinuxDevice::attach(const LinuxOptions& options) {
    const std::string render = options.driPath + "/renderD" + std::to_string(caps_.drmRenderMinor);
    drm_ = sys_.open(render.c_str(), O_RDWR | O_CLOEXEC);
    if (drm_ < 0) return errnoError("open render node", "cannot open " + render + " (drm_render_minor of topology node " + std::to_string(caps_.nodeIndex) + ")");
    uapi::acquire_vm_args vm{uint32_t(drm_), caps_.gpuId};
    if (Status s = kfdIoctl(sys_, kfd_, uapi::kIocAcquireVm, &vm, "ACQUIRE_VM", "render node " + render + ", gpu_id " + hex(caps_.gpuId)); !s) return s;

    // As tinygrad does from KFD 1.14 (FACTS.md §5.8): before any queue exists.
    if (version_.minor_version >= 14) {
        uapi::runtime_enable_args rt{};
        if (Status s = kfdIoctl(sys_, kfd_, uapi::kIocRuntimeEnable, &rt, "RUNTIME_ENABLE", "mode 0"); !s && s.error().errnum != EBUSY) return s;
    }

    // The GPUVM aperture of this GPU in our process: every VA we hand KFD must lie inside it
    // (libhsakmt reads the same at init, fmm_init_process_apertures).
    std::vector<uapi::process_device_apertures> apertures(64);
    uapi::get_process_apertures_new_args ap{reinterpret_cast<uint64_t>(apertures.data()), uint32_t(apertures.size()), 0};
    if (Status s = kfdIoctl(sys_, kfd_, uapi::kIocGetProcessAperturesNew, &ap, "GET_PROCESS_APERTURES_NEW", "gpu_id " + hex(caps_.gpuId)); !s) return s;
    for (uint32_t i = 0; i < std::min<uint32_t>(ap.num_of_nodes, uint32_t(apertures.size())); ++i) {
        if (apertures[i].gpu_id != caps_.gpuId) continue;
        gpuvmBase_ = apertures[i].gpuvm_base;
        gpuvmLimit_ = apertures[i].gpuvm_limit;
    }
    if (gpuvmLimit_ == 0) return plainError("GET_PROCESS_APERTURES_NEW", "KFD listed no apertures for gpu_id " + hex(caps_.gpuId));

    // Event page first: on a dGPU the first CREATE_EVENT must bring it (kfd_ioctl_create_event).
    Result<Memory> page = allocMemory(uint64_t(uapi::kSignalEventLimit) * 8, MemoryKind::Gtt, {.uncached = true});
    if (!page) return page.error();
    eventPage_ = *page;
    std::memset(eventPage_.cpuPtr, 0xFF, eventPage_.size);  // every slot "unsignalled" (KFD UNSIGNALED_EVENT_SLOT)
    Result<Event> memory = createKfdEvent(uapi::kEventMemory, false);
    if (!memory) return memory.error();
    memoryEvent_ = *memory;
    Result<Event> hw = createKfdEvent(uapi::kEventHwException, false);
    if (!hw) return hw.error();
    hwExceptionEvent_ = *hw;
    return {};
}

Status LinuxDevice::mapToGpu(uint64_t handle, bool map) {
    uint32_t gpuId = caps_.gpuId;
    uapi::map_memory_to_gpu_args args{handle, reinterpret_cast<uint64_t>(&gpuId), 1, 0};
    if (map) return kfdIoctl(sys_, kfd_, uapi::kIocMapMemoryToGpu, &args, "MAP_MEMORY_TO_GPU", "handle " + hex(handle));
    return kfdIoctl(sys_, kfd_, uapi::kIocUnmapMemoryFromGpu, &args, "UNMAP_MEMORY_FROM_GPU", "handle " + hex(handle));
}

Result<Memory> LinuxDevice::allocMemory(uint64_t size, MemoryKind kind, AllocOptions options) {
    // The doorbell BO is exactly the process's doorbell frame (kfd_ioctl_alloc_memory_of_gpu
    // rejects any other size).
    size = kind == MemoryKind::Doorbell ? uapi::kDoorbellFrameBytes : alignUp(size, kPage);
    // The CPU and GPU see one address: reserve it first, allocate the BO there, then map the
    // BO's pages over the reservation (tinygrad KFDIface.alloc).
    void* va = sys_.mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED) return errnoError("allocMemory", "cannot reserve " + hex(size) + " bytes of address space");
    const uint64_t va64 = reinterpret_cast<uint64_t>(va);
    if (va64 < gpuvmBase_ || va64 + size - 1 > gpuvmLimit_) {
        sys_.munmap(va, size);
        return plainError("allocMemory", "address " + hex(va64) + " (+" + hex(size) + ") is outside the GPUVM aperture " + hex(gpuvmBase_) + "-" + hex(gpuvmLimit_));
    }
    uint32_t flags = options.readOnly ? 0 : uapi::kAllocWritable;
    if (options.executable) flags |= uapi::kAllocExecutable;
    switch (kind) {
        case MemoryKind::Vram: flags |= uapi::kAllocVram | (options.hostAccess ? uapi::kAllocPublic : 0) | uapi::kAllocNoSubstitute; break;
        case MemoryKind::Gtt: flags |= uapi::kAllocGtt; break;
        case MemoryKind::Doorbell: flags |= uapi::kAllocDoorbell | uapi::kAllocNoSubstitute; break;
    }
    if (options.uncached) flags |= uapi::kAllocCoherent | uapi::kAllocUncached;
    uapi::alloc_memory_of_gpu_args args{reinterpret_cast<uint64_t>(va), size, 0, 0, caps_.gpuId, flags};
    const std::string what = std::string(memoryKindName(kind)) + ", " + hex(size) + " bytes at " + hex(args.va_addr) + ", flags " + hex(flags);
    if (Status s = kfdIoctl(sys_, kfd_, uapi::kIocAllocMemoryOfGpu, &args, "ALLOC_MEMORY_OF_GPU", what); !s) {
        sys_.munmap(va, size);
        return s.error();
    }
    Memory memory{args.va_addr, va, size, kind, args.handle};
    // VRAM outside the BAR: the GPU mapping only; the PROT_NONE reservation keeps the address ours.
    if (kind == MemoryKind::Vram && !options.hostAccess) {
        memory.cpuPtr = nullptr;
        if (Status s = mapToGpu(memory.handle, true); !s) {
            uapi::free_memory_of_gpu_args free{memory.handle};
            (void)kfdIoctl(sys_, kfd_, uapi::kIocFreeMemoryOfGpu, &free, "FREE_MEMORY_OF_GPU", "");
            sys_.munmap(va, size);
            return s.error();
        }
        return memory;
    }
    // CPU mapping: BOs through the render node at the offset KFD returned; doorbells through
    // /dev/kfd itself at the doorbell mmap type for this GPU (kfd_priv.h KFD_MMAP_TYPE_DOORBELL).
    const int fd = kind == MemoryKind::Doorbell ? kfd_ : drm_;
    const uint64_t offset = kind == MemoryKind::Doorbell ? (uapi::kMmapTypeDoorbell | uapi::mmapGpuId(caps_.gpuId)) : args.mmap_offset;
    if (sys_.mmap(va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, off_t(offset)) == MAP_FAILED) {
        Error e = errnoError("allocMemory", "cannot map " + what + " for the CPU at mmap offset " + hex(offset));
        (void)freeMemory(memory);
        return e;
    }
    if (Status s = mapToGpu(memory.handle, true); !s) {
        Error e = s.error();
        uapi::free_memory_of_gpu_args free{memory.handle};
        (void)kfdIoctl(sys_, kfd_, uapi::kIocFreeMemoryOfGpu, &free, "FREE_MEMORY_OF_GPU", "");
        sys_.munmap(va, size);
        return e;
    }
    return memory;
}

Status LinuxDevice::freeMemory(Memory& memory) {
    if (!memory) return {};
    Status unmapped = mapToGpu(memory.handle, false);
    uapi::free_memory_of_gpu_args args{memory.handle};
    Status freed = kfdIoctl(sys_, kfd_, uapi::kIocFreeMemoryOfGpu, &args, "FREE_MEMORY_OF_GPU", "handle " + hex(memory.handle));
    sys_.munmap(reinterpret_cast<void*>(memory.gpuVa), memory.size);  // the CPU address is the GPU's (or its reservation)
    memory = Memory{};
    if (!unmapped) return unmapped;
    return freed;
}

Result<Queue> LinuxDevice::createQueue(const QueueOptions& options) {
    const QueueBufferSizes& sizes = caps_.queueBuffers;
    if (options.ringBytes < 4096 || (options.ringBytes & (options.ringBytes - 1)))
        return plainError("CREATE_QUEUE", "ring size " + std::to_string(options.ringBytes) + " is not a power of two >= 4096 (KFD maps the ring as exactly ring_size bytes of whole pages)");
    if (!doorbellFrame_) {
        Result<Memory> frame = allocMemory(uapi::kDoorbellFrameBytes, MemoryKind::Doorbell, {});
        if (!frame) return frame.error();
        doorbellFrame_ = *frame;
    }
    Queue q;
    auto release = [&](Error e) -> Result<Queue> {
        for (Memory* m : {&q.ring, &q.pointers, &q.eop, &q.ctxSave}) (void)freeMemory(*m);
        return e;
    };
    // Ring and pointers: uncached GTT, as tinygrad and libhsakmt place them, so CPU writes are
    // seen by the CP without a flush. KFD checks rptr/wptr each lie in a 1-page mapping.
    Result<Memory> m = allocMemory(options.ringBytes, MemoryKind::Gtt, {.uncached = true});
    if (!m) return release(m.error());
    q.ring = *m;
    if (!(m = allocMemory(kPage, MemoryKind::Gtt, {.uncached = true}))) return release(m.error());
    q.pointers = *m;
    if (!(m = allocMemory(sizes.eopBytes, MemoryKind::Vram, {}))) return release(m.error());
    q.eop = *m;
    if (!(m = allocMemory(sizes.ctxSaveMappingBytes, MemoryKind::Gtt, {}))) return release(m.error());
    q.ctxSave = *m;
    std::memset(q.pointers.cpuPtr, 0, kPage);

    uapi::create_queue_args args{};
    args.ring_base_address = q.ring.gpuVa;
    args.write_pointer_address = q.pointers.gpuAddress(Queue::kWptrOffset);
    args.read_pointer_address = q.pointers.gpuAddress(Queue::kRptrOffset);
    args.ring_size = options.ringBytes;
    args.gpu_id = caps_.gpuId;
    args.queue_type = uapi::kQueueTypeCompute;
    args.queue_percentage = options.percentage;
    args.queue_priority = options.priority;
    args.eop_buffer_address = q.eop.gpuVa;
    args.eop_buffer_size = sizes.eopBytes;
    args.ctx_save_restore_address = q.ctxSave.gpuVa;
    args.ctx_save_restore_size = sizes.ctxSaveBytes;
    args.ctl_stack_size = sizes.ctlStackBytes;
    const std::string what = "PM4 compute queue, ring " + hex(options.ringBytes) + " bytes, eop " + hex(sizes.eopBytes) +
                             ", ctx save " + hex(sizes.ctxSaveBytes) + " (ctl stack " + hex(sizes.ctlStackBytes) + ", mapping " +
                             hex(sizes.ctxSaveMappingBytes) + ")";
    if (Status s = kfdIoctl(sys_, kfd_, uapi::kIocCreateQueue, &args, "CREATE_QUEUE", what); !s) return release(s.error());
    q.id = args.queue_id;
    q.doorbellOffset = args.doorbell_offset;
    // The low bits of doorbell_offset are this queue's byte offset in the 2-page frame (SOC15+).
    q.doorbell = doorbellFrame_.as<volatile uint64_t>(args.doorbell_offset & (uapi::kDoorbellFrameBytes - 1));
    std::lock_guard lock(mutex_);
    queues_[q.id] = q;
    return q;
}

Status LinuxDevice::destroyQueue(Queue& queue) {
    uapi::destroy_queue_args args{queue.id, 0};
    Status s = kfdIoctl(sys_, kfd_, uapi::kIocDestroyQueue, &args, "DESTROY_QUEUE", "queue " + std::to_string(queue.id));
    for (Memory* m : {&queue.ring, &queue.pointers, &queue.eop, &queue.ctxSave}) (void)freeMemory(*m);
    std::lock_guard lock(mutex_);
    queues_.erase(queue.id);
    lastDoorbell_.erase(queue.id);
    return s;
}

Result<Event> LinuxDevice::createKfdEvent(uint32_t type, bool autoReset) {
    uapi::create_event_args args{};
    args.event_type = type;
    args.auto_reset = autoReset ? 1 : 0;
    args.node_id = caps_.nodeIndex;
    static_assert(sizeof(args.event_page_offset) == 8);
    if (type == uapi::kEventSignal && !eventPageRegistered_) args.event_page_offset = eventPage_.handle;
    if (Status s = kfdIoctl(sys_, kfd_, uapi::kIocCreateEvent, &args, "CREATE_EVENT", "type " + std::to_string(type)); !s) return s.error();
    if (type == uapi::kEventSignal) eventPageRegistered_ = true;
    Event e;
    e.id = args.event_id;
    e.slot = args.event_slot_index;
    e.autoReset = autoReset;
    if (type == uapi::kEventSignal) {
        e.mailboxGpuVa = eventPage_.gpuAddress(uint64_t(e.slot) * 8);
        e.mailbox = eventPage_.as<volatile uint64_t>(uint64_t(e.slot) * 8);
    }
    return e;
}

Result<Event> LinuxDevice::createEvent(bool autoReset) { return createKfdEvent(uapi::kEventSignal, autoReset); }

Status LinuxDevice::destroyEvent(Event& event) {
    uapi::destroy_event_args args{event.id, 0};
    Status s = kfdIoctl(sys_, kfd_, uapi::kIocDestroyEvent, &args, "DESTROY_EVENT", "event " + std::to_string(event.id));
    event = Event{};
    return s;
}

Status LinuxDevice::setEvent(const Event& event) {
    uapi::set_event_args args{event.id, 0};
    return kfdIoctl(sys_, kfd_, uapi::kIocSetEvent, &args, "SET_EVENT", "event " + std::to_string(event.id));
}

std::string LinuxDevice::exceptionReport(const uapi::event_data& data, uint32_t type) const {
    if (type == uapi::kEventMemory) {
        const auto& m = data.memory_exception_data;
        return "GPU memory fault at " + hex(m.va) + (m.failure.NotPresent ? " (page not present)" : "") +
               (m.failure.ReadOnly ? " (write to read-only page)" : "") + (m.failure.NoExecute ? " (no-execute page)" : "") +
               (m.failure.imprecise ? " (imprecise address)" : "");
    }
    const auto& h = data.hw_exception_data;
    return std::string("GPU hardware exception: ") + (h.reset_type ? "per-engine reset" : "whole-GPU reset") +
           (h.reset_cause ? ", ECC" : ", GPU hang") + (h.memory_lost ? ", VRAM lost" : "");
}

Status LinuxDevice::waitEvents(std::span<const Event> events, uint32_t timeoutMs, bool waitAll) {
    // The caller's events, then the two exception events so a GPU fault ends the wait instead
    // of running into the timeout (tinygrad waits on the same pair). With waitAll the exception
    // events cannot be added: KFD would wait for them too.
    std::vector<uapi::event_data> data(events.size());
    for (size_t i = 0; i < events.size(); ++i) data[i].event_id = events[i].id;
    const size_t exceptionsAt = data.size();
    if (!waitAll) {
        for (const Event* e : {&memoryEvent_, &hwExceptionEvent_}) {
            uapi::event_data d{};
            d.event_id = e->id;
            if (e->id) data.push_back(d);
        }
    }
    uapi::wait_events_args args{};
    args.events_ptr = reinterpret_cast<uint64_t>(data.data());
    args.num_events = uint32_t(data.size());
    args.wait_for_all = waitAll ? 1 : 0;
    args.timeout = std::min(timeoutMs, uapi::kWaitInfinite - 1);  // never the "forever" value
    std::string ids;
    for (const Event& e : events) ids += (ids.empty() ? "" : ", ") + std::to_string(e.id);
    if (Status s = kfdIoctl(sys_, kfd_, uapi::kIocWaitEvents, &args, "WAIT_EVENTS", "events " + ids); !s) return s;
    std::vector<Queue> live;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, q] : queues_) live.push_back(q);
    }
    std::vector<QueueState> states;
    for (const Queue& q : live) states.push_back(readQueueState(q));  // takes mutex_ itself
    if (args.wait_result == uapi::kWaitTimeout) return waitTimeoutError("event(s) " + ids, timeoutMs, states);
    if (args.wait_result != uapi::kWaitComplete) return Error{"WAIT_EVENTS", EIO, "KFD reported wait_result " + std::to_string(args.wait_result) + " for events " + ids};
    // Completed: if an exception event fired, that is the answer, with the fault's details.
    for (size_t i = exceptionsAt; i < data.size(); ++i) {
        const uint32_t type = data[i].event_id == memoryEvent_.id ? uapi::kEventMemory : uapi::kEventHwException;
        const uint64_t va = data[i].memory_exception_data.va;
        const bool fired = type == uapi::kEventMemory ? (va != 0 || data[i].memory_exception_data.failure.NotPresent) : data[i].hw_exception_data.gpu_id != 0;
        if (!fired) continue;
        std::string message = exceptionReport(data[i], type) + " while waiting for events " + ids;
        for (const QueueState& q : states) message += "\n  " + q.describe();
        return Error{"waitEvents", EFAULT, std::move(message)};
    }
    return {};
}

QueueState LinuxDevice::readQueueState(const Queue& queue) const {
    QueueState s;
    s.queueId = queue.id;
    s.ringDwords = queue.ringDwords();
    s.rptr = std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(queue.rptr())).load(std::memory_order_acquire);
    s.wptr = std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(queue.wptr())).load(std::memory_order_acquire);
    {
        std::lock_guard lock(mutex_);  // the doorbell page is write-only MMIO: report what we wrote
        const auto it = lastDoorbell_.find(queue.id);
        s.doorbell = it == lastDoorbell_.end() ? 0 : it->second;
    }
    fillPacketAtRptr(queue, s);
    return s;
}

// Why opening failed, in the words the brief and issue 4 ask for: what was looked for.
Error noDevice(const LinuxOptions& o, const std::string& detail, int errnum) {
    return Error{"open kfd", errnum,
                 "no " + o.kfdPath + " (looked for " + o.kfdPath + " and " + o.topologyRoot + "/nodes/*): " + detail};
}

}  // namespace

Result<std::unique_ptr<Device>> openLinuxDevice(const LinuxOptions& options) {
    // Topology first: it names the GPU, and its absence is the clearest "no KFD here".
    Result<Topology> topo = readTopology(options.topologyRoot);
    std::error_code ec;
    const bool haveNode = std::filesystem::exists(options.kfdPath, ec);
    if (!topo || !haveNode) {
        std::string detail = haveNode ? "" : options.kfdPath + " does not exist";
        if (!topo) detail += (detail.empty() ? "" : "; ") + topo.error().message;
        return noDevice(options, detail + " (no AMD GPU with the amdgpu/KFD driver on this machine? use the simulated GPU explicitly)", ENOENT);
    }
    const std::vector<const TopologyNode*> gpus = topo->gpus();
    const TopologyNode* node = nullptr;
    for (const TopologyNode* n : gpus)
        if (!options.node || n->index == *options.node) { node = n; break; }
    if (!node) {
        return noDevice(options, options.node ? "topology has no GPU node " + std::to_string(*options.node)
                                              : "topology lists no GPU node (every node has gpu_id 0)", ENODEV);
    }
    Result<GpuCaps> caps = capsFromTopologyNode(*node);
    if (!caps) return caps.error();
    // All of VRAM visible (Resizable BAR) reads as 0: nothing to stage.
    const uint64_t visible = readSysfsBytes(options.sysfsDrm + "/renderD" + std::to_string(caps->drmRenderMinor) + "/device/mem_info_vis_vram_total");
    if (visible && caps->vramBytes && visible < caps->vramBytes) caps->cpuVisibleVramBytes = visible;

    Syscalls& sys = options.syscalls ? *options.syscalls : hostSyscalls();
    const int kfd = sys.open(options.kfdPath.c_str(), O_RDWR | O_CLOEXEC);
    if (kfd < 0) return errnoError("open kfd", "cannot open " + options.kfdPath + " (permissions: is the user in the 'render' group?)");
    uapi::get_version_args version{};
    if (Status s = kfdIoctl(sys, kfd, uapi::kIocGetVersion, &version, "GET_VERSION", options.kfdPath + " is not a KFD device?"); !s) {
        sys.close(kfd);
        return s.error();
    }
    if (version.major_version != 1 || version.minor_version < 11) {
        sys.close(kfd);
        return plainError("GET_VERSION", "KFD ioctl version " + std::to_string(version.major_version) + "." +
                                             std::to_string(version.minor_version) + " is older than 1.11 (unified context-save memory)");
    }
    auto device = std::make_unique<LinuxDevice>(sys, kfd, std::move(*caps), version);
    if (Status s = device->attach(options); !s) return s.error();
    return std::unique_ptr<Device>(std::move(device));
}

}  // namespace zinc::kfd
