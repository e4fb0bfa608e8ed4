// kfd::Device over an amdgpu render node: GEM memory, user-mode queues, polled mailbox events,
// and the CS route (drm_cs.cpp). The ioctl sequence: open the render node -> AMDGPU_INFO
// (DEV_INFO, HW_IP_INFO, UQ_FW_AREAS) -> per allocation GEM_CREATE, GEM_MMAP + mmap, GEM_VA at
// the CPU address -> per queue four BOs and USERQ CREATE (FACTS.md §6.2).
// Not yet run on hardware: this machine has no AMD GPU (tiers.md); the simulated amdgpu driver
// (sim_amdgpu.h) answers the same ioctls in CI.
#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "kfd/device/kernel_ring.h"
#include "umq/amdgpu_uapi.h"
#include "umq/drm_ioctl.h"

namespace zinc::umq {

kfd::Status drmIoctl(DrmSyscalls& sys, int fd, unsigned long request, void* arg, const char* name, const std::string& what) {
    int rc;
    do {
        rc = sys.ioctl(fd, request, arg);
    } while (rc == -1 && (errno == EINTR || errno == EAGAIN));
    if (rc == -1) return kfd::errnoError(name, what);
    return {};
}

namespace {

class HostDrmSyscalls final : public DrmSyscalls {
public:
    int open(const char* path, int flags) override { return kfd::hostSyscalls().open(path, flags); }
    int close(int fd) override { return kfd::hostSyscalls().close(fd); }
    int ioctl(int fd, unsigned long request, void* arg) override { return kfd::hostSyscalls().ioctl(fd, request, arg); }
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override {
        return kfd::hostSyscalls().mmap(addr, length, prot, flags, fd, offset);
    }
    int munmap(void* addr, size_t length) override { return kfd::hostSyscalls().munmap(addr, length); }
};

constexpr uint64_t kPage = 4096;
constexpr uint64_t kUnsignalled = ~0ull;
constexpr uint32_t kEventSlots = 512;  // one GTT page of 8-byte mailboxes
constexpr uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

template <class T> T loadAcquire(const volatile T* p) { return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_acquire); }

class RenderNodeDevice final : public DrmDevice {
public:
    RenderNodeDevice(DrmSyscalls& sys, int fd, DrmOptions options) : sys_(sys), fd_(fd), options_(std::move(options)) {}
    ~RenderNodeDevice() override;

    kfd::Status init();

    std::string name() const override { return options_.label + "amdgpu " + options_.renderPath + " (" + caps_.gfxName + ")"; }
    const kfd::GpuCaps& caps() const override { return caps_; }
    const DrmFacts& facts() const override { return facts_; }
    const std::string& renderPath() const override { return options_.renderPath; }
    std::string userQueueRefusal() const override;

    kfd::Result<kfd::Memory> allocMemory(uint64_t size, kfd::MemoryKind kind, kfd::AllocOptions options) override;
    kfd::Status freeMemory(kfd::Memory& memory) override;
    kfd::Result<kfd::Queue> createQueue(const kfd::QueueOptions& options) override;
    // One USERQ CREATE with this MQD; sets q.id.
    kfd::Status submitUserqCreate(kfd::Queue& q, const kfd::Memory& doorbell, const void* mqd, uint32_t mqdBytes);
    kfd::Result<kfd::Queue> registerQueue(kfd::Queue& q, const kfd::Memory& doorbell);
    kfd::Status destroyQueue(kfd::Queue& queue) override;
    kfd::Result<kfd::Event> createEvent(bool autoReset) override;
    kfd::Status destroyEvent(kfd::Event& event) override;
    kfd::Status setEvent(const kfd::Event& event) override;
    kfd::Status waitEvents(std::span<const kfd::Event> events, uint32_t timeoutMs, bool waitAll) override;
    kfd::QueueState readQueueState(const kfd::Queue& queue) const override;
    kfd::Result<kfd::LoadedCodeObject> loadCodeObject(std::shared_ptr<const kernels::CodeObject> object) override;
    kfd::Status unloadCodeObject(kfd::LoadedCodeObject& loaded) override;
    kfd::Result<std::unique_ptr<kfd::KernelRing>> openKernelRing() override;
    kfd::Status injectFault(const kfd::InjectedFault& fault) override { return sys_.injectFault(fault); }

protected:
    void doorbellRung(const kfd::Queue& queue) override { sys_.doorbellWritten(queue.doorbell); }

private:
    kfd::Status info(uint32_t query, void* out, uint32_t size, const char* what, uint32_t ipType = 0);
    kfd::Status fillCaps();
    kfd::Status gemClose(uint32_t handle);
    std::vector<uint32_t> liveHandles() const;
    kfd::Status faultedQueue() const;  // EFAULT naming a user queue the device reports faulted
    void freeQueueMemory(kfd::Queue& queue, kfd::Memory& doorbell);

    struct UserQueue {
        kfd::Queue queue;
        kfd::Memory doorbell;  // the DOORBELL-domain BO of this queue
    };

    DrmSyscalls& sys_;
    int fd_;
    DrmOptions options_;
    kfd::GpuCaps caps_;
    DrmFacts facts_;
    kfd::Memory eventPage_;
    mutable std::mutex mutex_;
    std::map<uint32_t, uint64_t> handles_;  // live GEM handles -> size
    std::map<uint32_t, UserQueue> queues_;
    std::vector<bool> eventUsed_ = std::vector<bool>(kEventSlots, false);
};

RenderNodeDevice::~RenderNodeDevice() {
    for (auto& [id, q] : std::map<uint32_t, UserQueue>(queues_)) (void)destroyQueue(q.queue);
    if (eventPage_) (void)freeMemory(eventPage_);
    if (fd_ >= 0) sys_.close(fd_);
}

kfd::Status RenderNodeDevice::info(uint32_t query, void* out, uint32_t size, const char* what, uint32_t ipType) {
    drm_amdgpu_info request{};
    request.return_pointer = reinterpret_cast<uint64_t>(out);
    request.return_size = size;
    request.query = query;
    request.query_hw_ip.type = ipType;
    return drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_INFO, &request, "AMDGPU_INFO", std::string(what) + " of " + options_.renderPath);
}

// The gfx target: HW_IP_INFO's ip_discovery_version (Linux 6.6+), else the GC IP version the
// driver publishes under sysfs ip_discovery (GC_HWID 11, FACTS.md §7).
kfd::Status RenderNodeDevice::fillCaps() {
    uapi::info_device dev{};
    if (kfd::Status s = info(AMDGPU_INFO_DEV_INFO, &dev, sizeof dev, "DEV_INFO"); !s) return s;
    facts_.family = dev.base.family;
    facts_.userqIpMask = dev.tail.userq_ip_mask;
    facts_.vaStart = dev.base.virtual_address_offset;
    facts_.vaEnd = dev.base.virtual_address_max;
    uapi::info_hw_ip ip{};
    if (kfd::Status s = info(AMDGPU_INFO_HW_IP_INFO, &ip, sizeof ip, "HW_IP_INFO(compute)", AMDGPU_HW_IP_COMPUTE); !s) return s;
    uint32_t version = ip.base._pad;  // ip_discovery_version
    if (version == 0) {
        const std::string gc = options_.sysfsDrm + "/" + options_.renderPath.substr(options_.renderPath.rfind('/') + 1) + "/device/ip_discovery/die/0/11/0/";
        uint32_t major = 0, minor = 0, revision = 0;
        std::ifstream(gc + "major") >> major;
        std::ifstream(gc + "minor") >> minor;
        std::ifstream(gc + "revision") >> revision;
        if (major == 0)
            return kfd::plainError("gfx target", options_.renderPath + ": HW_IP_INFO has no ip_discovery_version and " + gc + " is unreadable");
        version = (major << 16) | (minor << 8) | revision;
    }
    caps_.gfxTargetVersion = ((version >> 16) & 0xFF) * 10000 + ((version >> 8) & 0xFF) * 100 + (version & 0xFF);
    caps_.computeUnits = dev.base.cu_active_number;
    caps_.drmRenderMinor = uint32_t(std::atoi(options_.renderPath.substr(options_.renderPath.rfind("renderD") + 7).c_str()));
    drm_amdgpu_info_vram_gtt sizes{};
    if (kfd::Status s = info(AMDGPU_INFO_VRAM_GTT, &sizes, sizeof sizes, "VRAM_GTT"); !s) return s;
    caps_.vramBytes = sizes.vram_size;
    if (sizes.vram_cpu_accessible_size < sizes.vram_size) caps_.cpuVisibleVramBytes = sizes.vram_cpu_accessible_size;  // a small BAR
    if (kfd::Status s = kfd::applyGenerationTraits(caps_); !s) return s;
    uapi::drm_amdgpu_info_uq_metadata_compute eop{};
    if (info(uapi::kInfoUqFwAreas, &eop, sizeof eop, "UQ_FW_AREAS(compute)", AMDGPU_HW_IP_COMPUTE) && eop.eop_size) facts_.eopBytes = eop.eop_size;
    return {};
}

kfd::Status RenderNodeDevice::init() {
    if (kfd::Status s = fillCaps(); !s) return s;
    kfd::Result<kfd::Memory> page = allocMemory(kEventSlots * 8, kfd::MemoryKind::Gtt, {.uncached = true});
    if (!page) return page.error();
    eventPage_ = *page;
    std::fill_n(eventPage_.as<uint64_t>(), kEventSlots, kUnsignalled);
    return {};
}

std::string RenderNodeDevice::userQueueRefusal() const {
    if (facts_.userqIpMask & (1u << AMDGPU_HW_IP_COMPUTE)) return "";
    return options_.renderPath + " reports no compute user queues (AMDGPU_INFO userq_ip_mask " + hex(facts_.userqIpMask) +
           "): they need Linux >= 6.16 with amdgpu.user_queue=1 or 2 (-1, the default, enables them only on some ASICs)";
}

std::vector<uint32_t> RenderNodeDevice::liveHandles() const {
    std::lock_guard lock(mutex_);
    std::vector<uint32_t> out;
    for (const auto& [h, size] : handles_) out.push_back(h);
    return out;
}

kfd::Status RenderNodeDevice::gemClose(uint32_t handle) {
    drm_gem_close c{handle, 0};
    kfd::Status s = drmIoctl(sys_, fd_, DRM_IOCTL_GEM_CLOSE, &c, "GEM_CLOSE", "handle " + std::to_string(handle));
    std::lock_guard lock(mutex_);
    handles_.erase(handle);
    return s;
}

kfd::Result<kfd::Memory> RenderNodeDevice::allocMemory(uint64_t size, kfd::MemoryKind kind, kfd::AllocOptions options) {
    size = alignUp(std::max<uint64_t>(size, kPage), kPage);
    drm_amdgpu_gem_create create{};
    create.in.bo_size = size;
    create.in.alignment = kPage;
    switch (kind) {
        case kfd::MemoryKind::Vram:
            create.in.domains = AMDGPU_GEM_DOMAIN_VRAM;
            // Filled through the CPU mapping, unless the caller fills it with the GPU (a small BAR):
            // then the BO may live outside the CPU-visible window; its mapping only reserves the VA.
            if (options.hostAccess) create.in.domain_flags = AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;
            break;
        case kfd::MemoryKind::Gtt: create.in.domains = AMDGPU_GEM_DOMAIN_GTT; break;  // snooped: host and CP see one copy
        case kfd::MemoryKind::Doorbell: create.in.domains = uapi::kGemDomainDoorbell; break;
    }
    const std::string what = std::string(kfd::memoryKindName(kind)) + ", " + hex(size) + " bytes";
    if (kfd::Status s = drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_GEM_CREATE, &create, "GEM_CREATE", what); !s) return s.error();
    const uint32_t handle = create.out.handle;
    {
        std::lock_guard lock(mutex_);
        handles_[handle] = size;
    }
    drm_amdgpu_gem_mmap map{};
    map.in.handle = handle;
    if (kfd::Status s = drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_GEM_MMAP, &map, "GEM_MMAP", what); !s) {
        (void)gemClose(handle);
        return s.error();
    }
    void* cpu = sys_.mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, off_t(map.out.addr_ptr));
    if (cpu == MAP_FAILED) {
        kfd::Error e = kfd::errnoError("mmap", "cannot map " + what + " for the CPU at offset " + hex(map.out.addr_ptr));
        (void)gemClose(handle);
        return e;
    }
    const uint64_t va = reinterpret_cast<uint64_t>(cpu);
    kfd::Memory memory{va, cpu, size, kind, handle};
    if (kind == kfd::MemoryKind::Vram && !options.hostAccess) memory.cpuPtr = nullptr;  // a CPU touch would migrate it into the BAR
    if (kind == kfd::MemoryKind::Doorbell) return memory;  // written by the CPU only: no GPU mapping
    if (va < facts_.vaStart || va + size > facts_.vaEnd) {
        (void)freeMemory(memory);
        return kfd::plainError("GEM_VA", "the CPU mapping " + hex(va) + " (+" + hex(size) + ") lies outside the GPU VA range " +
                                             hex(facts_.vaStart) + "-" + hex(facts_.vaEnd));
    }
    // GPU VA = the CPU address (tinygrad's choice on KFD too): one pointer means the same to the
    // host, the CP and a kernel.
    drm_amdgpu_gem_va gva{};
    gva.handle = handle;
    gva.operation = AMDGPU_VA_OP_MAP;
    gva.flags = AMDGPU_VM_PAGE_READABLE | (options.readOnly ? 0 : AMDGPU_VM_PAGE_WRITEABLE) | (options.executable ? AMDGPU_VM_PAGE_EXECUTABLE : 0);
    gva.va_address = va;
    gva.offset_in_bo = 0;
    gva.map_size = size;
    if (kfd::Status s = drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_GEM_VA, &gva, "GEM_VA", what + " at " + hex(va)); !s) {
        kfd::Error e = s.error();
        sys_.munmap(cpu, size);
        (void)gemClose(handle);
        return e;
    }
    return memory;
}

kfd::Status RenderNodeDevice::freeMemory(kfd::Memory& memory) {
    if (!memory) return {};
    kfd::Status result;
    if (memory.kind != kfd::MemoryKind::Doorbell) {
        drm_amdgpu_gem_va gva{};
        gva.handle = uint32_t(memory.handle);
        gva.operation = AMDGPU_VA_OP_UNMAP;
        gva.va_address = memory.gpuVa;
        gva.map_size = memory.size;
        result = drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_GEM_VA, &gva, "GEM_VA", "unmap " + hex(memory.gpuVa));
    }
    sys_.munmap(reinterpret_cast<void*>(memory.gpuVa), memory.size);  // the CPU mapping is at the GPU VA
    kfd::Status closed = gemClose(uint32_t(memory.handle));
    memory = kfd::Memory{};
    return result ? closed : result;
}

void RenderNodeDevice::freeQueueMemory(kfd::Queue& q, kfd::Memory& doorbell) {
    for (kfd::Memory* m : {&q.ring, &q.pointers, &q.eop, &q.ctxSave, &doorbell}) (void)freeMemory(*m);
}


kfd::Result<kfd::Queue> RenderNodeDevice::createQueue(const kfd::QueueOptions& options) {
    if (const std::string refusal = userQueueRefusal(); !refusal.empty()) return kfd::Error{"USERQ", EOPNOTSUPP, refusal};
    if (options.ringBytes < 4096 || (options.ringBytes & (options.ringBytes - 1)))
        return kfd::Error{"USERQ", EINVAL, "ring size " + std::to_string(options.ringBytes) + " is not a power of two >= 4096"};
    kfd::Queue q;
    kfd::Memory doorbell;
    auto fail = [&](kfd::Error e) -> kfd::Result<kfd::Queue> {
        freeQueueMemory(q, doorbell);
        return e;
    };
    kfd::Result<kfd::Memory> m = allocMemory(options.ringBytes, kfd::MemoryKind::Gtt, {.uncached = true});
    if (!m) return fail(m.error());
    q.ring = *m;
    if (!(m = allocMemory(kPage, kfd::MemoryKind::Gtt, {.uncached = true}))) return fail(m.error());
    q.pointers = *m;  // rptr at 0, wptr at 8: each 8-byte aligned, inside one page as the kernel checks
    if (!(m = allocMemory(std::max<uint64_t>(facts_.eopBytes, kPage), kfd::MemoryKind::Vram, {}))) return fail(m.error());
    q.eop = *m;
    if (!(m = allocMemory(kPage, kfd::MemoryKind::Doorbell, {}))) return fail(m.error());
    doorbell = *m;
    // The MQD: with a context-save area where the kernel takes one (tried first, once), else
    // EOP only. Sized as KFD sizes it for the same chip (caps.h queueBufferSizes).
    constexpr uint32_t kCwsrMqd = sizeof(uapi::drm_amdgpu_userq_mqd_compute_gfx11_cwsr);
    constexpr uint32_t kEopMqd = sizeof(uapi::drm_amdgpu_userq_mqd_compute_gfx11);
    std::optional<kfd::Error> cwsrRefusal;
    if (facts_.mqdBytes != kEopMqd) {
        const uint64_t ctxBytes = caps_.queueBuffers.ctxSaveMappingBytes;
        if (!(m = allocMemory(ctxBytes, kfd::MemoryKind::Gtt, {}))) return fail(m.error());
        q.ctxSave = *m;
        const uapi::drm_amdgpu_userq_mqd_compute_gfx11_cwsr mqd{q.eop.gpuVa, q.ctxSave.gpuVa, uint32_t(q.ctxSave.size), 0};
        kfd::Status s = submitUserqCreate(q, doorbell, &mqd, kCwsrMqd);
        if (s) {
            facts_.mqdBytes = kCwsrMqd;
            return registerQueue(q, doorbell);
        }
        if (facts_.mqdBytes == kCwsrMqd || s.error().errnum != EINVAL) return fail(s.error());
        cwsrRefusal = s.error();
        (void)freeMemory(q.ctxSave);
    }
    const uapi::drm_amdgpu_userq_mqd_compute_gfx11 mqd{q.eop.gpuVa};
    if (kfd::Status s = submitUserqCreate(q, doorbell, &mqd, kEopMqd); !s) {
        kfd::Error e = s.error();
        if (cwsrRefusal) e.message += "; before that the 24-byte MQD with a context-save area: " + cwsrRefusal->describe();
        return fail(e);
    }
    facts_.mqdBytes = kEopMqd;
    return registerQueue(q, doorbell);
}

kfd::Status RenderNodeDevice::submitUserqCreate(kfd::Queue& q, const kfd::Memory& doorbell, const void* mqd, uint32_t mqdBytes) {
    uapi::drm_amdgpu_userq args{};
    args.in.op = uapi::kUserqOpCreate;
    args.in.ip_type = AMDGPU_HW_IP_COMPUTE;
    args.in.doorbell_handle = uint32_t(doorbell.handle);
    args.in.doorbell_offset = 0;  // the first 64-bit doorbell of this queue's own doorbell BO
    args.in.flags = uapi::kUserqPriorityNormalLow;
    args.in.queue_va = q.ring.gpuVa;
    args.in.queue_size = q.ring.size;
    args.in.rptr_va = q.pointers.gpuAddress(kfd::Queue::kRptrOffset);
    args.in.wptr_va = q.pointers.gpuAddress(kfd::Queue::kWptrOffset);
    args.in.mqd = reinterpret_cast<uint64_t>(mqd);
    args.in.mqd_size = mqdBytes;
    if (kfd::Status s = drmIoctl(sys_, fd_, uapi::kIoctlUserq, &args, "USERQ",
                                 "create a compute queue: ring " + hex(q.ring.gpuVa) + " (" + std::to_string(q.ring.size) + " bytes), eop " +
                                     hex(q.eop.gpuVa) + ", " + std::to_string(mqdBytes) + "-byte MQD" +
                                     (q.ctxSave ? ", context-save area " + hex(q.ctxSave.gpuVa) + " (" + hex(q.ctxSave.size) + " bytes)" : ""));
        !s)
        return s;
    q.id = args.out.queue_id;
    return {};
}

kfd::Result<kfd::Queue> RenderNodeDevice::registerQueue(kfd::Queue& q, const kfd::Memory& doorbell) {
    q.doorbell = doorbell.as<volatile uint64_t>();
    std::lock_guard lock(mutex_);
    queues_[q.id] = UserQueue{q, doorbell};
    return q;
}

kfd::Status RenderNodeDevice::destroyQueue(kfd::Queue& queue) {
    UserQueue uq;
    {
        std::lock_guard lock(mutex_);
        const auto it = queues_.find(queue.id);
        if (it == queues_.end()) return kfd::Error{"USERQ", EINVAL, "no user queue " + std::to_string(queue.id)};
        uq = it->second;
        queues_.erase(it);
    }
    uapi::drm_amdgpu_userq args{};
    args.in.op = uapi::kUserqOpFree;
    args.in.queue_id = queue.id;
    kfd::Status s = drmIoctl(sys_, fd_, uapi::kIoctlUserq, &args, "USERQ", "free queue " + std::to_string(queue.id));
    freeQueueMemory(uq.queue, uq.doorbell);
    queue = kfd::Queue{};
    return s;
}

kfd::Result<kfd::Event> RenderNodeDevice::createEvent(bool autoReset) {
    std::lock_guard lock(mutex_);
    uint32_t id = 1;  // 0 stays free, as on KFD: INT_CTXID 0 names no event
    while (id < kEventSlots && eventUsed_[id]) ++id;
    if (id == kEventSlots) return kfd::Error{"createEvent", ENOSPC, "all " + std::to_string(kEventSlots) + " mailboxes are in use"};
    eventUsed_[id] = true;
    std::atomic_ref<uint64_t>(eventPage_.as<uint64_t>()[id]).store(kUnsignalled, std::memory_order_release);
    return kfd::Event{id, id, eventPage_.gpuAddress(uint64_t(id) * 8), eventPage_.as<volatile uint64_t>(uint64_t(id) * 8), autoReset};
}

kfd::Status RenderNodeDevice::destroyEvent(kfd::Event& event) {
    std::lock_guard lock(mutex_);
    if (event.id == 0 || event.id >= kEventSlots || !eventUsed_[event.id]) return kfd::Error{"destroyEvent", EINVAL, "no event " + std::to_string(event.id)};
    eventUsed_[event.id] = false;
    event = kfd::Event{};
    return {};
}

kfd::Status RenderNodeDevice::setEvent(const kfd::Event& event) {
    std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(event.mailbox)).store(event.id, std::memory_order_release);
    return {};
}

kfd::Status RenderNodeDevice::waitEvents(std::span<const kfd::Event> events, uint32_t timeoutMs, bool waitAll) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    for (uint32_t poll = 0;; ++poll) {
        size_t signalled = 0;
        for (const kfd::Event& e : events) signalled += loadAcquire(e.mailbox) != kUnsignalled;
        if (!events.empty() && (waitAll ? signalled == events.size() : signalled > 0)) {
            for (const kfd::Event& e : events)
                if (e.autoReset && loadAcquire(e.mailbox) != kUnsignalled)
                    std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(e.mailbox)).store(kUnsignalled, std::memory_order_release);
            return {};
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        // A queue the device reports faulted will not signal (only the simulated driver reports it).
        if (poll % 20 == 19)  // about every millisecond
            if (kfd::Status f = faultedQueue(); !f) return f;
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    std::vector<kfd::QueueState> states;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, q] : queues_) states.push_back(readQueueState(q.queue));
    }
    std::string ids;
    for (const kfd::Event& e : events) ids += (ids.empty() ? "" : ", ") + std::to_string(e.id);
    return kfd::waitTimeoutError("mailbox event(s) " + ids, timeoutMs, states);
}

kfd::Status RenderNodeDevice::faultedQueue() const {
    std::vector<kfd::Queue> live;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, q] : queues_) live.push_back(q.queue);
    }
    for (const kfd::Queue& q : live)
        if (const kfd::QueueState s = readQueueState(q); s.fault) {
            std::string message = "GPU fault on user queue " + std::to_string(q.id) + "\n  " + s.describe();
            if (!s.fault->decoded.empty()) message += "\n" + s.fault->decoded;
            return kfd::Error{"waitEvents", EFAULT, std::move(message)};
        }
    return {};
}

kfd::QueueState RenderNodeDevice::readQueueState(const kfd::Queue& queue) const {
    kfd::QueueState s;
    s.queueId = queue.id;
    if (!queue.pointers) return s;
    s.ringDwords = queue.ringDwords();
    s.rptr = loadAcquire(queue.rptr());
    s.wptr = loadAcquire(queue.wptr());
    if (queue.doorbell) s.doorbell = loadAcquire(queue.doorbell);
    kfd::fillPacketAtRptr(queue, s);
    if (queue.doorbell) sys_.addSimulatorState(queue.doorbell, s);
    return s;
}

kfd::Result<kfd::LoadedCodeObject> RenderNodeDevice::loadCodeObject(std::shared_ptr<const kernels::CodeObject> object) {
    kfd::Result<kfd::LoadedCodeObject> loaded = Device::loadCodeObject(std::move(object));
    if (loaded) sys_.codeObjectLoaded(*loaded);
    return loaded;
}

kfd::Status RenderNodeDevice::unloadCodeObject(kfd::LoadedCodeObject& loaded) {
    sys_.codeObjectUnloaded(loaded);
    return Device::unloadCodeObject(loaded);
}

kfd::Result<std::unique_ptr<kfd::KernelRing>> RenderNodeDevice::openKernelRing() {
    return openCsRing(sys_, fd_, options_.renderPath, [this] { return liveHandles(); });
}

}  // namespace

uint32_t computeJobTimeoutMs(std::string_view lockupTimeout) {
    std::vector<long> values;
    std::string text(lockupTimeout);
    std::replace(text.begin(), text.end(), ',', ' ');
    std::istringstream in(text);
    for (long v; in >> v;) values.push_back(v);
    if (values.size() < 2 || values[1] == 0) return kDefaultComputeJobTimeoutMs;
    return values[1] < 0 ? 0u : uint32_t(std::min<long>(values[1], UINT32_MAX));
}

uint32_t DrmSyscalls::computeJobTimeoutMs() {
    std::ifstream f("/sys/module/amdgpu/parameters/lockup_timeout");
    std::string line;
    if (!f || !std::getline(f, line)) return kDefaultComputeJobTimeoutMs;
    return umq::computeJobTimeoutMs(line);
}

DrmSyscalls& hostDrmSyscalls() {
    static HostDrmSyscalls host;
    return host;
}

kfd::Result<std::unique_ptr<DrmDevice>> openDrmDevice(const DrmOptions& options) {
    DrmSyscalls& sys = options.syscalls ? *options.syscalls : hostDrmSyscalls();
    const int fd = sys.open(options.renderPath.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return kfd::errnoError("open render node", "cannot open " + options.renderPath);
    auto device = std::make_unique<RenderNodeDevice>(sys, fd, options);
    if (kfd::Status s = device->init(); !s) return s.error();
    return std::unique_ptr<DrmDevice>(std::move(device));
}

std::string describeMqd(const DrmFacts& facts, uint64_t ctxSaveBytes) {
    if (facts.mqdBytes == sizeof(uapi::drm_amdgpu_userq_mqd_compute_gfx11_cwsr))
        return "24-byte compute MQD (EOP + a " + hex(ctxSaveBytes) + "-byte context-save area)";
    if (facts.mqdBytes == sizeof(uapi::drm_amdgpu_userq_mqd_compute_gfx11))
        return "8-byte compute MQD (EOP only: this kernel takes no context-save area and refused the 24-byte one)";
    return "compute MQD size not yet probed (no user queue created)";
}

}  // namespace zinc::umq
