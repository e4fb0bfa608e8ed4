// The simulated amdgpu kernel driver (sim_amdgpu.h): the ioctls of umq/drm_device.cpp answered
// over the simulated GPU, with amdgpu's argument checks. The CS route runs on a kernel ring of
// its own, as amdgpu does: per job one INDIRECT_BUFFER per IB chunk, then the kernel's fence
// (RELEASE_MEM of the job number + interrupt), executed by the same SimQueue CP as user queues.
#include "umq/sim_amdgpu.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "kernels/code_object.h"
#include "kernels/pocl_runner.h"
#include "kfd/device/kernel_ring.h"
#include "kfd/sim/sim_dispatch.h"
#include "kfd/sim/sim_faults.h"
#include "kfd/sim/sim_memory.h"
#include "kfd/sim/sim_queue.h"
#include "pm4/stream.h"
#include "umq/amdgpu_uapi.h"

namespace zinc::umq {
namespace {

using kfd::MemoryKind;
constexpr int kRenderFd = 2000;
constexpr uint64_t kSimPage = 4096;
constexpr uint32_t kKernelRingId = 0x1000;       // queue id of the kernel ring (user queues count from 1)
constexpr uint32_t kKernelRingBytes = 64 * 1024;
constexpr uint64_t kVaStart = 0x200000, kVaEnd = 0x800000000000;  // amdgpu's 47-bit user range
constexpr uint32_t kEopBytes = 2048;

std::string hexs(uint64_t v) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return text;
}

class Driver final : public SimAmdgpu, private kfd::SimInterruptSink {
public:
    Driver(kfd::GpuCaps caps, SimAmdgpuOptions options, std::shared_ptr<kernels::PoclRunner> runner, kfd::SimExec exec)
        : caps_(std::move(caps)), options_(std::move(options)), runner_(std::move(runner)),
          svm_(runner_ ? std::make_unique<kfd::PoclSvm>(runner_->svm()) : nullptr), memory_(svm_.get()),
          dispatcher_(memory_, runner_.get(), exec, &faults_), gfx_(caps_.gfxMajor >= 12 ? pm4::Gfx::Gfx12 : pm4::Gfx::Gfx11) {}
    ~Driver() override;

    kfd::Status init();

    const std::string& gfxName() const override { return caps_.gfxName; }
    std::vector<std::string> log() const override {
        std::lock_guard lock(mutex_);
        return log_;
    }
    std::string lastRefusal() const override {
        std::lock_guard lock(mutex_);
        return lastRefusal_;
    }

    int open(const char* path, int) override {
        if (options_.renderPath != path) {
            errno = ENOENT;
            return -1;
        }
        return kRenderFd;
    }
    int close(int fd) override { return fd == kRenderFd ? 0 : (errno = EBADF, -1); }
    int ioctl(int fd, unsigned long request, void* arg) override;
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override;
    int munmap(void*, size_t) override { return 0; }  // the BO's memory lives until GEM_CLOSE

    void doorbellWritten(const volatile uint64_t* doorbell) override;
    void codeObjectLoaded(const kfd::LoadedCodeObject& loaded) override {
        for (const kernels::KernelInfo& k : loaded.object->kernels())
            dispatcher_.add(kfd::SimKernel{loaded.object, &k, loaded.image.gpuVa + k.descriptorAddress, loaded.image.gpuVa + k.entryAddress});
    }
    void codeObjectUnloaded(const kfd::LoadedCodeObject& loaded) override { dispatcher_.removeRange(loaded.image.gpuVa, loaded.image.size); }
    kfd::Status injectFault(const kfd::InjectedFault& fault) override { return faults_.arm(fault); }
    void addSimulatorState(const volatile uint64_t* doorbell, kfd::QueueState& state) override;
    uint32_t computeJobTimeoutMs() override { return options_.jobTimeoutMs; }

private:
    struct Bo {
        kfd::Memory memory;
        uint64_t domain = 0;
        bool vaMapped = false;
    };
    struct Syncobj {
        uint64_t job = 0;  // the kernel-ring job whose fence it holds; 0: none yet
    };
    struct Context {
        uint64_t resetCounter = 0;  // the driver's reset count when it was made (amdgpu_ctx reset_counter)
        bool guilty = false;        // a job of its own was on the ring when it was reset
        uint32_t hangs = 0;
    };
    struct Job {
        uint32_t ctx = 0;
        std::chrono::steady_clock::time_point submitted;
    };

    // Caller holds mutex_.
    int refuse(int err, std::string why) {
        lastRefusal_ = std::move(why);
        errno = err;
        return -1;
    }
    const Bo* boAt(uint64_t va, uint64_t bytes) const;
    int info(drm_amdgpu_info& a);
    int gemCreate(drm_amdgpu_gem_create& a);
    int gemMmap(drm_amdgpu_gem_mmap& a);
    int gemVa(drm_amdgpu_gem_va& a);
    int gemClose(drm_gem_close& a);
    int userq(uapi::drm_amdgpu_userq& a);
    int ctx(drm_amdgpu_ctx& a);
    int cs(drm_amdgpu_cs& a);
    int syncobjWait(drm_syncobj_wait& a, std::unique_lock<std::mutex>& lock);
    int runJob(std::span<const kfd::IbRange> ibs, uint64_t& job);
    bool ringNeedsReset() const;
    void resetKernelRing(std::unique_lock<std::mutex>& lock);
    uint64_t kernelFence() const { return std::atomic_ref<uint64_t>(*kernelFence_.as<uint64_t>()).load(std::memory_order_acquire); }

    void interrupt(uint32_t, uint32_t) override { wakeWaiters(); }
    void queueFaulted(uint32_t) override { wakeWaiters(); }
    void wakeWaiters() {
        { std::lock_guard lock(mutex_); }
        fenceChanged_.notify_all();
    }

    kfd::GpuCaps caps_;
    SimAmdgpuOptions options_;
    std::shared_ptr<kernels::PoclRunner> runner_;
    std::unique_ptr<kfd::SvmSource> svm_;
    kfd::SimMemory memory_;
    kfd::SimFaults faults_;  // before the dispatcher and the queues, which hold a pointer to it
    kfd::SimDispatcher dispatcher_;
    pm4::Gfx gfx_;

    mutable std::mutex mutex_;
    std::condition_variable fenceChanged_;
    std::vector<std::string> log_;
    std::string lastRefusal_;
    std::map<uint32_t, Bo> bos_;
    uint32_t nextHandle_ = 1;
    std::map<uint32_t, std::unique_ptr<kfd::SimQueue>> userQueues_;
    std::unique_ptr<kfd::SimQueue> dying_;  // freed by USERQ FREE, joined once the lock is dropped
    uint32_t nextQueue_ = 1;
    std::map<uint32_t, Context> contexts_;
    std::map<uint64_t, Job> pendingJobs_;  // submitted, not known retired
    uint64_t resets_ = 0;                  // ring resets so far (amdgpu's gpu_reset_counter)
    std::optional<kfd::QueueState> resetState_;  // the kernel ring's CP as it stood at the last reset
    uint32_t nextContext_ = 1;
    std::map<uint32_t, Syncobj> syncobjs_;
    uint32_t nextSyncobj_ = 1;
    // The kernel's compute ring.
    kfd::Memory kernelRing_, kernelPointers_, kernelDoorbell_, kernelFence_;
    kfd::Queue kernelQueue_;
    std::unique_ptr<kfd::SimQueue> kernelCp_;
    uint64_t kernelWptr_ = 0, jobs_ = 0;
};

Driver::~Driver() {
    std::map<uint32_t, std::unique_ptr<kfd::SimQueue>> queues;
    {
        std::lock_guard lock(mutex_);
        queues.swap(userQueues_);
    }
    queues.clear();    // joins the CP threads before their memory goes away
    kernelCp_.reset();
}

kfd::Status Driver::init() {
    using B = kfd::SimMemory::Backing;
    for (auto [m, bytes] : {std::pair{&kernelRing_, uint64_t(kKernelRingBytes)}, std::pair{&kernelPointers_, kSimPage},
                            std::pair{&kernelDoorbell_, kSimPage}, std::pair{&kernelFence_, kSimPage}}) {
        kfd::Result<kfd::Memory> r = memory_.allocate(bytes, MemoryKind::Gtt, B::Anonymous);
        if (!r) return r.error();
        *m = *r;
    }
    kernelQueue_.id = kKernelRingId;
    kernelQueue_.ring = kernelRing_;
    kernelQueue_.pointers = kernelPointers_;
    kernelQueue_.doorbell = kernelDoorbell_.as<volatile uint64_t>();
    kernelCp_ = std::make_unique<kfd::SimQueue>(kernelQueue_, gfx_, memory_, &dispatcher_, static_cast<kfd::SimInterruptSink&>(*this), &faults_);
    return {};
}

const Driver::Bo* Driver::boAt(uint64_t va, uint64_t bytes) const {
    for (const auto& [h, bo] : bos_)
        if (bo.vaMapped && va >= bo.memory.gpuVa && va + bytes <= bo.memory.gpuVa + bo.memory.size) return &bo;
    return nullptr;
}

int Driver::ioctl(int fd, unsigned long request, void* arg) {
    std::unique_lock lock(mutex_);
    if (fd != kRenderFd) return refuse(EBADF, "not the simulated render node's fd");
    auto logged = [&](const char* name) { log_.emplace_back(name); };
    switch (uint32_t(request)) {
        case DRM_IOCTL_AMDGPU_INFO: logged("INFO"); return info(*static_cast<drm_amdgpu_info*>(arg));
        case DRM_IOCTL_AMDGPU_GEM_CREATE: logged("GEM_CREATE"); return gemCreate(*static_cast<drm_amdgpu_gem_create*>(arg));
        case DRM_IOCTL_AMDGPU_GEM_MMAP: logged("GEM_MMAP"); return gemMmap(*static_cast<drm_amdgpu_gem_mmap*>(arg));
        case DRM_IOCTL_AMDGPU_GEM_VA: logged("GEM_VA"); return gemVa(*static_cast<drm_amdgpu_gem_va*>(arg));
        case DRM_IOCTL_GEM_CLOSE: logged("GEM_CLOSE"); return gemClose(*static_cast<drm_gem_close*>(arg));
        case uapi::kIoctlUserq: {
            auto& a = *static_cast<uapi::drm_amdgpu_userq*>(arg);
            logged(a.in.op == uapi::kUserqOpCreate ? "USERQ CREATE" : "USERQ FREE");
            const int rc = userq(a);
            // A freed queue's CP thread is joined without the lock: it may be waiting for it.
            std::unique_ptr<kfd::SimQueue> dying = std::move(dying_);
            const int err = errno;
            lock.unlock();
            dying.reset();
            errno = err;
            return rc;
        }
        case DRM_IOCTL_AMDGPU_CTX: logged("CTX"); return ctx(*static_cast<drm_amdgpu_ctx*>(arg));
        case DRM_IOCTL_AMDGPU_CS: logged("CS"); return cs(*static_cast<drm_amdgpu_cs*>(arg));
        case DRM_IOCTL_SYNCOBJ_CREATE: {
            logged("SYNCOBJ_CREATE");
            auto& a = *static_cast<drm_syncobj_create*>(arg);
            if (a.flags) return refuse(EINVAL, "SYNCOBJ_CREATE: flags " + hexs(a.flags) + " (the simulator creates unsignalled syncobjs only)");
            a.handle = nextSyncobj_++;
            syncobjs_[a.handle] = {};
            return 0;
        }
        case DRM_IOCTL_SYNCOBJ_DESTROY: {
            logged("SYNCOBJ_DESTROY");
            auto& a = *static_cast<drm_syncobj_destroy*>(arg);
            return syncobjs_.erase(a.handle) ? 0 : refuse(EINVAL, "SYNCOBJ_DESTROY: no syncobj " + std::to_string(a.handle));
        }
        case DRM_IOCTL_SYNCOBJ_WAIT: logged("SYNCOBJ_WAIT"); return syncobjWait(*static_cast<drm_syncobj_wait*>(arg), lock);
        default: return refuse(ENOTTY, "ioctl " + hexs(request) + " is not one the simulated amdgpu driver answers");
    }
}

int Driver::info(drm_amdgpu_info& a) {
    auto answer = [&](const void* data, size_t bytes) {
        // amdgpu_info_ioctl: copies min(return_size, its own size).
        std::memcpy(reinterpret_cast<void*>(a.return_pointer), data, std::min<size_t>(bytes, a.return_size));
        return 0;
    };
    if (!a.return_pointer || !a.return_size) return refuse(EINVAL, "INFO: no return buffer");
    switch (a.query) {
        case AMDGPU_INFO_DEV_INFO: {
            uapi::info_device d{};
            d.base.family = caps_.gfxMajor >= 12 ? 152 : 145;  // AMDGPU_FAMILY_GC_12_0_0 / GC_11_0_0
            d.base.cu_active_number = caps_.computeUnits;
            d.base.gpu_counter_freq = 100000;  // kHz: the 100 MHz GPU clock the simulated CP counts
            d.base.virtual_address_offset = kVaStart;
            d.base.virtual_address_max = kVaEnd;
            d.base.virtual_address_alignment = uint32_t(kSimPage);
            d.base.wave_front_size = caps_.waveSize;
            d.tail.userq_ip_mask = options_.userQueues ? 1u << AMDGPU_HW_IP_COMPUTE : 0;
            return answer(&d, sizeof d);
        }
        case AMDGPU_INFO_HW_IP_INFO: {
            if (a.query_hw_ip.type != AMDGPU_HW_IP_COMPUTE) return refuse(EINVAL, "HW_IP_INFO: the simulator has the compute IP only");
            uapi::info_hw_ip ip{};
            ip.base.hw_ip_version_major = caps_.gfxMajor;
            ip.base.hw_ip_version_minor = caps_.gfxMinor;
            ip.base.available_rings = 1;
            ip.base.ib_start_alignment = 256;
            ip.base.ib_size_alignment = 4;
            ip.base._pad = (caps_.gfxMajor << 16) | (caps_.gfxMinor << 8) | caps_.gfxStepping;  // ip_discovery_version
            return answer(&ip, sizeof ip);
        }
        case AMDGPU_INFO_VRAM_GTT: {
            drm_amdgpu_info_vram_gtt v{caps_.vramBytes, caps_.vramBytes, 16ull << 30};
            return answer(&v, sizeof v);
        }
        case uapi::kInfoUqFwAreas: {
            uapi::drm_amdgpu_info_uq_metadata_compute m{kEopBytes, 256};
            return answer(&m, sizeof m);
        }
        case AMDGPU_INFO_FW_VERSION: {
            drm_amdgpu_info_firmware fw{0, 0};  // no firmware: the simulated CP is software
            return answer(&fw, sizeof fw);
        }
        default: return refuse(EINVAL, "INFO query " + hexs(a.query) + " is not one the simulator answers");
    }
}

int Driver::gemCreate(drm_amdgpu_gem_create& a) {
    const uint64_t domains = a.in.domains;
    if (a.in.bo_size == 0) return refuse(EINVAL, "GEM_CREATE: size 0");
    MemoryKind kind;
    if (domains == AMDGPU_GEM_DOMAIN_VRAM)
        kind = MemoryKind::Vram;
    else if (domains == AMDGPU_GEM_DOMAIN_GTT)
        kind = MemoryKind::Gtt;
    else if (domains == uapi::kGemDomainDoorbell)
        kind = MemoryKind::Doorbell;
    else
        return refuse(EINVAL, "GEM_CREATE: domains " + hexs(domains) + " (the simulator has VRAM, GTT or DOORBELL)");
    if (kind == MemoryKind::Doorbell && a.in.bo_size != kSimPage)
        return refuse(EINVAL, "GEM_CREATE: a doorbell BO of " + hexs(a.in.bo_size) + " bytes (the simulator gives one page)");
    const auto backing = kind == MemoryKind::Doorbell ? kfd::SimMemory::Backing::Anonymous : kfd::SimMemory::Backing::Svm;
    kfd::Result<kfd::Memory> m = memory_.allocate(a.in.bo_size, kind, backing);
    if (!m) return refuse(ENOMEM, "GEM_CREATE: " + m.error().describe());
    const uint32_t handle = nextHandle_++;
    bos_[handle] = Bo{*m, domains, false};
    a.out = {};
    a.out.handle = handle;
    return 0;
}

int Driver::gemMmap(drm_amdgpu_gem_mmap& a) {
    if (!bos_.count(a.in.handle)) return refuse(ENOENT, "GEM_MMAP: no BO " + std::to_string(a.in.handle));
    const uint32_t handle = a.in.handle;
    a.out.addr_ptr = uint64_t(handle) << 32;  // a fake vma offset naming the BO
    return 0;
}

void* Driver::mmap(void* addr, size_t length, int, int flags, int fd, off_t offset) {
    std::lock_guard lock(mutex_);
    const auto it = bos_.find(uint32_t(uint64_t(offset) >> 32));
    if (fd != kRenderFd || it == bos_.end() || (uint64_t(offset) & 0xFFFFFFFF) || !(flags & MAP_SHARED)) {
        refuse(EINVAL, "mmap: offset " + hexs(uint64_t(offset)) + " names no BO of the simulated node");
        return MAP_FAILED;
    }
    if (length > it->second.memory.size || (addr && addr != it->second.memory.cpuPtr)) {
        refuse(EINVAL, "mmap: " + hexs(length) + " bytes of a " + hexs(it->second.memory.size) + "-byte BO");
        return MAP_FAILED;
    }
    return it->second.memory.cpuPtr;  // the simulated GPU's memory is host memory: one mapping
}

int Driver::gemVa(drm_amdgpu_gem_va& a) {
    const auto it = bos_.find(a.handle);
    if (it == bos_.end()) return refuse(ENOENT, "GEM_VA: no BO " + std::to_string(a.handle));
    Bo& bo = it->second;
    if (a.operation == AMDGPU_VA_OP_UNMAP) {
        if (!bo.vaMapped || a.va_address != bo.memory.gpuVa) return refuse(ENOENT, "GEM_VA unmap: BO " + std::to_string(a.handle) + " is not mapped at " + hexs(a.va_address));
        bo.vaMapped = false;
        return 0;
    }
    if (a.operation != AMDGPU_VA_OP_MAP) return refuse(EINVAL, "GEM_VA: operation " + std::to_string(a.operation));
    // amdgpu_gem_va_ioctl: page-aligned address and size inside the VA range, the BO big enough.
    if (a.va_address % kSimPage || a.map_size % kSimPage || a.offset_in_bo % kSimPage)
        return refuse(EINVAL, "GEM_VA: address " + hexs(a.va_address) + ", size " + hexs(a.map_size) + " or offset not page aligned");
    if (a.va_address < kVaStart || a.va_address + a.map_size > kVaEnd) return refuse(EINVAL, "GEM_VA: " + hexs(a.va_address) + " outside the VA range");
    if (a.offset_in_bo + a.map_size > bo.memory.size) return refuse(EINVAL, "GEM_VA: the mapping runs past the BO");
    if (!(a.flags & AMDGPU_VM_PAGE_READABLE)) return refuse(EINVAL, "GEM_VA: a mapping the GPU cannot read");
    if (bo.domain == uapi::kGemDomainDoorbell) return refuse(EINVAL, "GEM_VA: doorbell BOs are not GPU memory");
    if (a.va_address != bo.memory.gpuVa || a.offset_in_bo != 0)
        return refuse(EINVAL, "GEM_VA: the simulated GPU maps a BO only at its CPU address " + hexs(bo.memory.gpuVa) + ", asked " + hexs(a.va_address));
    bo.vaMapped = true;
    return 0;
}

int Driver::gemClose(drm_gem_close& a) {
    const auto it = bos_.find(a.handle);
    if (it == bos_.end()) return refuse(EINVAL, "GEM_CLOSE: no BO " + std::to_string(a.handle));
    (void)memory_.release(it->second.memory);
    bos_.erase(it);
    return 0;
}

// amdgpu_userq_ioctl / amdgpu_userq_input_va_validate (FACTS.md §6.2) for a compute queue.
int Driver::userq(uapi::drm_amdgpu_userq& a) {
    if (a.in.op == uapi::kUserqOpFree) {
        const auto it = userQueues_.find(a.in.queue_id);
        if (it == userQueues_.end()) return refuse(EINVAL, "USERQ FREE: no queue " + std::to_string(a.in.queue_id));
        dying_ = std::move(it->second);
        userQueues_.erase(it);
        return 0;
    }
    if (a.in.op != uapi::kUserqOpCreate) return refuse(EINVAL, "USERQ: op " + std::to_string(a.in.op));
    if (!options_.userQueues) return refuse(EOPNOTSUPP, "USERQ: user queues are off (simulating a kernel without them)");
    const auto& in = a.in;
    if (in.ip_type != AMDGPU_HW_IP_COMPUTE) return refuse(EINVAL, "USERQ: ip_type " + std::to_string(in.ip_type) + " (the simulator has compute queues)");
    if (in.flags & ~0x7u) return refuse(EINVAL, "USERQ: unknown flags " + hexs(in.flags));
    if ((in.flags & 3) == 3) return refuse(EACCES, "USERQ: HIGH priority is for CAP_SYS_NICE only");
    if (in.queue_size == 0 || in.queue_size % 256) return refuse(EINVAL, "USERQ: queue_size " + hexs(in.queue_size) + " is not a multiple of 256");
    if (!boAt(in.queue_va, in.queue_size)) return refuse(EINVAL, "USERQ: queue_va " + hexs(in.queue_va) + " + queue_size is not mapped");
    for (uint64_t va : {in.rptr_va, in.wptr_va})
        if (va % 8 || !boAt(va, 8)) return refuse(EINVAL, "USERQ: rptr/wptr " + hexs(va) + " is not 8-byte aligned inside a mapped BO");
    if (in.wptr_va != in.rptr_va + 8) return refuse(EINVAL, "USERQ: the simulator wants wptr_va == rptr_va + 8");
    const uint64_t mqdBytes = options_.cwsrMqd ? sizeof(uapi::drm_amdgpu_userq_mqd_compute_gfx11_cwsr) : sizeof(uapi::drm_amdgpu_userq_mqd_compute_gfx11);
    if (in.mqd_size != mqdBytes || !in.mqd)
        return refuse(EINVAL, "USERQ: mqd_size " + std::to_string(in.mqd_size) + " is not sizeof(drm_amdgpu_userq_mqd_compute_gfx11), " +
                                  std::to_string(mqdBytes) + " on this kernel");
    uapi::drm_amdgpu_userq_mqd_compute_gfx11_cwsr mqd{};
    std::memcpy(&mqd, reinterpret_cast<const void*>(in.mqd), mqdBytes);
    if (!boAt(mqd.eop_va, kEopBytes)) return refuse(EINVAL, "USERQ: eop_va " + hexs(mqd.eop_va) + " is not mapped over 2048 bytes");
    // The context-save area must be mapped over the size given, and hold what KFD's formula asks.
    if (options_.cwsrMqd) {
        const uint64_t needed = caps_.queueBuffers.ctxSaveBytes;
        if (mqd.ctx_save_area_size < needed || !boAt(mqd.ctx_save_area_va, mqd.ctx_save_area_size))
            return refuse(EINVAL, "USERQ: ctx_save_area_va " + hexs(mqd.ctx_save_area_va) + " is not mapped over ctx_save_area_size " +
                                      hexs(mqd.ctx_save_area_size) + " (at least " + hexs(needed) + ")");
    }
    const auto db = bos_.find(in.doorbell_handle);
    if (db == bos_.end() || db->second.domain != uapi::kGemDomainDoorbell) return refuse(EINVAL, "USERQ: doorbell_handle is not a DOORBELL BO");
    if (uint64_t(in.doorbell_offset + 1) * 8 > db->second.memory.size) return refuse(EINVAL, "USERQ: doorbell_offset past the doorbell BO");
    const auto* doorbell = db->second.memory.as<volatile uint64_t>(uint64_t(in.doorbell_offset) * 8);
    for (const auto& [id, q] : userQueues_)
        if (q->queue().doorbell == doorbell) return refuse(EBUSY, "USERQ: that doorbell belongs to queue " + std::to_string(id));
    kfd::Queue q;
    q.id = nextQueue_++;
    q.ring = kfd::Memory{in.queue_va, reinterpret_cast<void*>(in.queue_va), in.queue_size, MemoryKind::Gtt, 0};
    q.pointers = kfd::Memory{in.rptr_va, reinterpret_cast<void*>(in.rptr_va), 16, MemoryKind::Gtt, 0};
    q.doorbell = const_cast<volatile uint64_t*>(doorbell);
    *q.doorbell = 0;
    userQueues_[q.id] = std::make_unique<kfd::SimQueue>(q, gfx_, memory_, &dispatcher_, static_cast<kfd::SimInterruptSink&>(*this), &faults_);
    a.out = {};
    a.out.queue_id = q.id;
    return 0;
}

void Driver::doorbellWritten(const volatile uint64_t* doorbell) {
    std::lock_guard lock(mutex_);
    for (const auto& [id, q] : userQueues_)
        if (q->queue().doorbell == doorbell) return q->doorbellRung();
}

int Driver::ctx(drm_amdgpu_ctx& a) {
    if (a.in.op == AMDGPU_CTX_OP_ALLOC_CTX) {
        if (a.in.priority > AMDGPU_CTX_PRIORITY_NORMAL) return refuse(EACCES, "CTX: priority above NORMAL needs CAP_SYS_NICE");
        const uint32_t id = nextContext_++;
        contexts_[id] = Context{resets_, false, 0};
        resetState_.reset();  // a new context starts on the ring as it is now
        a.out = {};
        a.out.alloc.ctx_id = id;
        return 0;
    }
    if (a.in.op == AMDGPU_CTX_OP_FREE_CTX) return contexts_.erase(a.in.ctx_id) ? 0 : refuse(EINVAL, "CTX: no context " + std::to_string(a.in.ctx_id));
    if (a.in.op == AMDGPU_CTX_OP_QUERY_STATE2) {
        // amdgpu_ctx_query2: RESET when the GPU was reset since the context was made, GUILTY when
        // one of its jobs caused it.
        const auto it = contexts_.find(a.in.ctx_id);
        if (it == contexts_.end()) return refuse(EINVAL, "CTX QUERY_STATE2: no context " + std::to_string(a.in.ctx_id));
        a.out = {};
        if (it->second.resetCounter != resets_) a.out.state.flags |= AMDGPU_CTX_QUERY2_FLAGS_RESET;
        if (it->second.guilty) a.out.state.flags |= AMDGPU_CTX_QUERY2_FLAGS_GUILTY;
        a.out.state.hangs = it->second.hangs;
        return 0;
    }
    return refuse(EINVAL, "CTX: op " + std::to_string(a.in.op) + " (the simulator allocates, frees and answers QUERY_STATE2)");
}

// amdgpu_cs_ioctl: parse the chunks, check the IBs and the BO list, then run the job.
int Driver::cs(drm_amdgpu_cs& a) {
    const auto context = contexts_.find(a.in.ctx_id);
    if (context == contexts_.end()) return refuse(EINVAL, "CS: no context " + std::to_string(a.in.ctx_id));
    // amdgpu refuses work from a context whose job caused a GPU reset (amdgpu_cs_parser_init,
    // "skip guilty context job": -ECANCELED).
    if (context->second.guilty)
        return refuse(ECANCELED, "CS: context " + std::to_string(a.in.ctx_id) + " is guilty of a GPU reset (make a new context)");
    if (a.in.num_chunks == 0 || !a.in.chunks) return refuse(EINVAL, "CS: no chunks");
    const auto* pointers = reinterpret_cast<const uint64_t*>(a.in.chunks);
    std::vector<kfd::IbRange> ibs;
    std::vector<uint32_t> listed;
    std::vector<uint32_t> signal;
    for (uint32_t i = 0; i < a.in.num_chunks; ++i) {
        const auto& chunk = *reinterpret_cast<const drm_amdgpu_cs_chunk*>(pointers[i]);
        switch (chunk.chunk_id) {
            case AMDGPU_CHUNK_ID_IB: {
                if (chunk.length_dw != sizeof(drm_amdgpu_cs_chunk_ib) / 4) return refuse(EINVAL, "CS: IB chunk of " + std::to_string(chunk.length_dw) + " dwords");
                const auto& ib = *reinterpret_cast<const drm_amdgpu_cs_chunk_ib*>(chunk.chunk_data);
                if (ib.ip_type != AMDGPU_HW_IP_COMPUTE || ib.ip_instance != 0 || ib.ring != 0)
                    return refuse(EINVAL, "CS: IB for ip " + std::to_string(ib.ip_type) + " ring " + std::to_string(ib.ring) + " (the simulator has compute ring 0)");
                if (ib.flags) return refuse(EINVAL, "CS: IB flags " + hexs(ib.flags) + " on compute");
                if (ib.ib_bytes == 0 || ib.ib_bytes % 4 || ib.va_start % 4) return refuse(EINVAL, "CS: IB of " + std::to_string(ib.ib_bytes) + " bytes at " + hexs(ib.va_start));
                if (!boAt(ib.va_start, ib.ib_bytes)) return refuse(EINVAL, "CS: IB " + hexs(ib.va_start) + " is not mapped (amdgpu_cs_find_mapping)");
                ibs.push_back({ib.va_start, ib.ib_bytes / 4});
                break;
            }
            case AMDGPU_CHUNK_ID_BO_HANDLES: {
                const auto& list = *reinterpret_cast<const drm_amdgpu_bo_list_in*>(chunk.chunk_data);
                if (list.bo_info_size != sizeof(drm_amdgpu_bo_list_entry)) return refuse(EINVAL, "CS: BO list entries of " + std::to_string(list.bo_info_size) + " bytes");
                const auto* entries = reinterpret_cast<const drm_amdgpu_bo_list_entry*>(list.bo_info_ptr);
                for (uint32_t k = 0; k < list.bo_number; ++k) {
                    if (!bos_.count(entries[k].bo_handle)) return refuse(ENOENT, "CS: BO list names handle " + std::to_string(entries[k].bo_handle));
                    listed.push_back(entries[k].bo_handle);
                }
                break;
            }
            case AMDGPU_CHUNK_ID_SYNCOBJ_OUT: {
                const uint32_t n = chunk.length_dw * 4 / sizeof(drm_amdgpu_cs_chunk_sem);
                const auto* sems = reinterpret_cast<const drm_amdgpu_cs_chunk_sem*>(chunk.chunk_data);
                for (uint32_t k = 0; k < n; ++k) {
                    if (!syncobjs_.count(sems[k].handle)) return refuse(EINVAL, "CS: SYNCOBJ_OUT names syncobj " + std::to_string(sems[k].handle));
                    signal.push_back(sems[k].handle);
                }
                break;
            }
            default: return refuse(EINVAL, "CS: chunk id " + std::to_string(chunk.chunk_id) + " (the simulator takes IB, BO_HANDLES, SYNCOBJ_OUT)");
        }
    }
    if (ibs.empty()) return refuse(EINVAL, "CS: no IB chunk");
    // Residency: every BO an IB lies in must be on the job's list (the kernel validates those).
    for (const kfd::IbRange& ib : ibs) {
        bool found = false;
        for (uint32_t h : listed) found = found || (bos_.at(h).memory.gpuVa <= ib.address && ib.address < bos_.at(h).memory.gpuVa + bos_.at(h).memory.size);
        if (!found) return refuse(EINVAL, "CS: the BO holding IB " + hexs(ib.address) + " is not on the job's BO list");
    }
    uint64_t job = 0;
    if (const int rc = runJob(ibs, job); rc != 0) return rc;
    pendingJobs_.erase(pendingJobs_.begin(), pendingJobs_.upper_bound(kernelFence()));  // retired
    pendingJobs_[job] = Job{a.in.ctx_id, std::chrono::steady_clock::now()};
    for (uint32_t h : signal) syncobjs_[h].job = job;
    a.out.handle = job;
    return 0;
}

// What amdgpu_ib_schedule emits for a compute job, reduced: the IBs, then the ring's fence.
int Driver::runJob(std::span<const kfd::IbRange> ibs, uint64_t& job) {
    std::vector<uint32_t> storage(8 * ibs.size() + 16);
    pm4::Stream s(storage, gfx_);
    for (const kfd::IbRange& ib : ibs) s.indirectBuffer(ib.address, ib.dwords);
    job = jobs_ + 1;
    s.releaseMem({.gcrCntl = 0x70F, .data = pm4::ReleaseData::Value64, .interrupt = pm4::ReleaseInterrupt::InterruptAfterWriteConfirm,
                  .address = kernelFence_.gpuVa, .value = job});
    const uint32_t n = kernelQueue_.ringDwords();
    const uint32_t rptr = std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(kernelQueue_.rptr())).load(std::memory_order_acquire);
    const uint32_t pending = uint32_t((kernelWptr_ % n + n - rptr) % n);
    if (s.size() > n - 1 - pending) return refuse(EBUSY, "CS: the kernel ring is full (" + std::to_string(pending) + " dwords pending)");
    for (uint32_t i = 0; i < s.size(); ++i) kernelQueue_.ringData()[(kernelWptr_ + i) % n] = s.dwords()[i];
    kernelWptr_ += s.size();
    jobs_ = job;
    std::atomic_thread_fence(std::memory_order_release);
    std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(kernelQueue_.wptr())).store(kernelWptr_, std::memory_order_release);
    std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(kernelQueue_.doorbell)).store(kernelWptr_, std::memory_order_release);
    kernelCp_->doorbellRung();
    return 0;
}

void Driver::addSimulatorState(const volatile uint64_t* doorbell, kfd::QueueState& state) {
    std::lock_guard lock(mutex_);
    std::optional<kfd::QueueState> sim;
    if (!doorbell) {
        sim = resetState_ ? resetState_ : std::optional<kfd::QueueState>(kernelCp_->state());
    } else {
        for (const auto& [id, q] : userQueues_)
            if (q->queue().doorbell == doorbell) sim = q->state();
    }
    if (!sim) return;
    state.insideIb = sim->insideIb;
    state.fault = sim->fault;
    state.lastFence = sim->lastFence;
}

// The ring faulted, or its oldest pending job has run past the job timeout. Caller holds mutex_.
bool Driver::ringNeedsReset() const {
    const auto oldest = pendingJobs_.upper_bound(kernelFence());
    if (oldest == pendingJobs_.end()) return false;
    return kernelCp_->fault().has_value() ||
           std::chrono::steady_clock::now() - oldest->second.submitted >= std::chrono::milliseconds(options_.jobTimeoutMs);
}

// amdgpu's job timeout handler, reduced: the ring's CP is stopped and made anew on an empty ring,
// every pending job is signalled (their own fences stay short: the work did not run), the context
// of the job that was running is guilty, and the reset counter every context compares with moves.
void Driver::resetKernelRing(std::unique_lock<std::mutex>& lock) {
    const auto oldest = pendingJobs_.upper_bound(kernelFence());
    if (const auto ctx = contexts_.find(oldest->second.ctx); ctx != contexts_.end()) {
        ctx->second.guilty = true;
        ++ctx->second.hangs;
    }
    ++resets_;
    resetState_ = kernelCp_->state();
    std::unique_ptr<kfd::SimQueue> old = std::move(kernelCp_);
    lock.unlock();
    old.reset();  // stops a hung packet and joins the CP thread (which takes mutex_ to wake waiters)
    lock.lock();
    std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(kernelQueue_.rptr())).store(0, std::memory_order_release);
    std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(kernelQueue_.wptr())).store(0, std::memory_order_release);
    std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(kernelQueue_.doorbell)).store(0, std::memory_order_release);
    kernelWptr_ = 0;
    std::atomic_ref<uint64_t>(*kernelFence_.as<uint64_t>()).store(jobs_, std::memory_order_release);
    pendingJobs_.clear();
    kernelCp_ = std::make_unique<kfd::SimQueue>(kernelQueue_, gfx_, memory_, &dispatcher_, static_cast<kfd::SimInterruptSink&>(*this), &faults_);
}

int Driver::syncobjWait(drm_syncobj_wait& a, std::unique_lock<std::mutex>& lock) {
    if (a.count_handles == 0) return refuse(EINVAL, "SYNCOBJ_WAIT: no handles");
    const auto* handles = reinterpret_cast<const uint32_t*>(a.handles);
    const bool all = a.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    // timeout_nsec is absolute CLOCK_MONOTONIC, which is steady_clock on Linux.
    const auto deadline = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(a.timeout_nsec));
    for (;;) {
        if (ringNeedsReset()) resetKernelRing(lock);
        uint32_t done = 0;
        bool faulted = kernelCp_->fault().has_value();
        for (uint32_t i = 0; i < a.count_handles; ++i) {
            const auto it = syncobjs_.find(handles[i]);
            if (it == syncobjs_.end()) return refuse(EINVAL, "SYNCOBJ_WAIT: no syncobj " + std::to_string(handles[i]));
            if (it->second.job == 0 && !(a.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT))
                return refuse(EINVAL, "SYNCOBJ_WAIT: syncobj " + std::to_string(handles[i]) + " has no fence");
            // A faulted job is signalled with an error, as after amdgpu's job timeout and reset:
            // the waiter returns and finds its fence memory short of the value.
            if (it->second.job != 0 && (kernelFence() >= it->second.job || faulted)) ++done;
        }
        if (all ? done == a.count_handles : done > 0) return 0;
        // Wake for the deadline, or for the oldest pending job's timeout (the TDR).
        auto until = deadline;
        if (const auto oldest = pendingJobs_.upper_bound(kernelFence()); oldest != pendingJobs_.end())
            until = std::min(until, oldest->second.submitted + std::chrono::milliseconds(options_.jobTimeoutMs) + std::chrono::milliseconds(1));
        if (fenceChanged_.wait_until(lock, until) == std::cv_status::timeout && std::chrono::steady_clock::now() >= deadline)
            return refuse(ETIME, "SYNCOBJ_WAIT: timed out; kernel ring: " + kernelCp_->state().describe());
    }
}

}  // namespace

kfd::Result<std::shared_ptr<SimAmdgpu>> makeSimAmdgpu(std::string_view gfxName, const SimAmdgpuOptions& options) {
    kfd::Result<kfd::GpuCaps> caps = kfd::capsFromGfxName(gfxName);
    if (!caps) return caps.error();
    // Kernels execute as the simulated kfd device executes them (ZINC_SIM_EXEC: machine code or PoCL).
    kfd::SimExec exec = kfd::SimExec::Pocl;
    try {
        if (options.pocl) exec = kfd::simExecFromEnvironment();
    } catch (const std::exception& e) {
        return kfd::plainError("open simulated amdgpu", e.what());
    }
    std::shared_ptr<kernels::PoclRunner> runner = options.runner;
    if (exec == kfd::SimExec::Pocl && options.pocl && !runner) {
        try {
            runner = std::make_shared<kernels::PoclRunner>();
        } catch (const std::exception& e) {
            return kfd::plainError("open simulated amdgpu", std::string("PoCL is needed to run kernels on the simulated ") + caps->gfxName + ": " + e.what());
        }
    }
    auto driver = std::make_shared<Driver>(std::move(*caps), options, std::move(runner), exec);
    if (kfd::Status s = driver->init(); !s) return s.error();
    return std::shared_ptr<SimAmdgpu>(std::move(driver));
}

namespace {
// The device and the driver it talks to, kept together so the driver outlives the device.
struct SimNode {
    std::shared_ptr<SimAmdgpu> driver;
    std::unique_ptr<DrmDevice> device;  // declared last: destroyed first
};
}  // namespace

kfd::Result<std::shared_ptr<DrmDevice>> openSimulatedDrmDevice(std::string_view gfxName, const SimAmdgpuOptions& options) {
    kfd::Result<std::shared_ptr<SimAmdgpu>> driver = makeSimAmdgpu(gfxName, options);
    if (!driver) return driver.error();
    DrmOptions o;
    o.renderPath = options.renderPath;
    o.label = "simulated ";
    o.syscalls = driver->get();
    kfd::Result<std::unique_ptr<DrmDevice>> device = openDrmDevice(o);
    if (!device) return device.error();
    auto node = std::make_shared<SimNode>();
    node->driver = *driver;
    node->device = std::move(*device);
    return std::shared_ptr<DrmDevice>(node, node->device.get());
}

}  // namespace zinc::umq
