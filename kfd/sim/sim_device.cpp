// kfd::Device on the simulated GPU: the same verbs and the same checks as KFD (ring a power of
// two, queue buffers sized as kfd_queue_acquire_buffers wants them, event mailboxes in an event
// page), backed by SimMemory, one SimQueue (a CP thread) per queue, and SimDispatcher for kernels.
#include "kfd/sim/sim_device.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "kernels/pocl_runner.h"
#include "kfd/device/kfd_uapi.h"
#include "kfd/sim/sim_dispatch.h"
#include "kfd/sim/sim_faults.h"
#include "kfd/sim/sim_memory.h"
#include "kfd/sim/sim_queue.h"

namespace zinc::kfd {
namespace {

constexpr uint64_t kUnsignalledSlot = ~0ull;  // kfd_events.c UNSIGNALED_EVENT_SLOT
constexpr uint32_t kDoorbellSlots = uint32_t(uapi::kDoorbellFrameBytes / uapi::kDoorbellBytes);

class SimDevice final : public Device, private SimInterruptSink {
public:
    SimDevice(GpuCaps caps, std::shared_ptr<kernels::PoclRunner> runner, SimExec exec)
        : caps_(std::move(caps)), runner_(std::move(runner)),
          svm_(runner_ ? std::make_unique<PoclSvm>(runner_->svm()) : nullptr),
          memory_(svm_.get()), dispatcher_(memory_, runner_.get(), exec, &faults_) {}
    ~SimDevice() override;

    Status init();

    std::string name() const override {
        const std::string gpu = "simulated " + caps_.gfxName + (caps_.nodeIndex ? " node " + std::to_string(caps_.nodeIndex) : "");
        if (dispatcher_.exec() == SimExec::Isa) return gpu + " (machine code in the ISA interpreter)";
        return gpu + (runner_ ? " (kernels on PoCL)" : " (no kernel execution)");
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
    Result<LoadedCodeObject> loadCodeObject(std::shared_ptr<const kernels::CodeObject> object) override;
    Status unloadCodeObject(LoadedCodeObject& loaded) override;
    Status injectFault(const InjectedFault& fault) override { return faults_.arm(fault); }

protected:
    void doorbellRung(const Queue& queue) override;

private:
    struct EventState {
        uint32_t slot = 0;
        bool autoReset = true;
        bool signalled = false;
    };
    void interrupt(uint32_t queueId, uint32_t contextId) override;
    void queueFaulted(uint32_t queueId) override;
    void signalLocked(uint32_t id, EventState& e);
    std::vector<QueueState> allQueueStates() const;

    GpuCaps caps_;
    std::shared_ptr<kernels::PoclRunner> runner_;
    std::unique_ptr<SvmSource> svm_;
    SimMemory memory_;
    SimFaults faults_;  // before the dispatcher and the queues, which hold a pointer to it
    SimDispatcher dispatcher_;
    Memory doorbellFrame_;  // the process doorbell frame: 1024 8-byte doorbells
    Memory eventPage_;      // 4096 8-byte signal mailboxes

    mutable std::mutex mutex_;  // guards everything below; lock order: device, then a queue
    std::condition_variable eventsChanged_;
    std::map<uint32_t, std::unique_ptr<SimQueue>> queues_;
    std::vector<bool> doorbellUsed_ = std::vector<bool>(kDoorbellSlots, false);
    std::map<uint32_t, EventState> events_;
    uint32_t nextQueueId_ = 1;
    uint64_t visibleVramUsed_ = 0;               // small BAR: CPU-visible VRAM allocated
    std::set<uint64_t> visibleVramHandles_;
};

SimDevice::~SimDevice() {
    std::map<uint32_t, std::unique_ptr<SimQueue>> queues;
    {
        std::lock_guard lock(mutex_);
        queues.swap(queues_);
    }
    queues.clear();  // joins every CP thread before the memory they use goes away
}

Status SimDevice::init() {
    Result<Memory> frame = memory_.allocate(uapi::kDoorbellFrameBytes, MemoryKind::Doorbell, SimMemory::Backing::Anonymous);
    if (!frame) return frame.error();
    doorbellFrame_ = *frame;
    Result<Memory> page = memory_.allocate(uint64_t(uapi::kSignalEventLimit) * 8, MemoryKind::Gtt, SimMemory::Backing::Anonymous);
    if (!page) return page.error();
    eventPage_ = *page;
    std::memset(eventPage_.cpuPtr, 0xFF, eventPage_.size);  // every slot unsignalled
    return {};
}

Result<Memory> SimDevice::allocMemory(uint64_t size, MemoryKind kind, AllocOptions options) {
    // Everything a kernel may touch is SVM; doorbells never are.
    const auto backing = kind == MemoryKind::Doorbell ? SimMemory::Backing::Anonymous : SimMemory::Backing::Svm;
    if (kind == MemoryKind::Doorbell) size = uapi::kDoorbellFrameBytes;
    const bool visibleVram = kind == MemoryKind::Vram && options.hostAccess && caps_.cpuVisibleVramBytes != 0;
    const uint64_t pages = (size + 4095) & ~uint64_t(4095);
    if (visibleVram) {
        // A small BAR: CPU-visible VRAM runs out before VRAM does, as KFD's PUBLIC allocations would.
        std::lock_guard lock(mutex_);
        if (visibleVramUsed_ + pages > caps_.cpuVisibleVramBytes)
            return Error{"ALLOC_MEMORY_OF_GPU", ENOMEM,
                         "CPU-visible VRAM, " + std::to_string(pages) + " bytes: " + std::to_string(visibleVramUsed_) + " of the " +
                             std::to_string(caps_.cpuVisibleVramBytes) + "-byte BAR are in use (allocate without host access and copy through GTT)"};
        visibleVramUsed_ += pages;
    }
    Result<Memory> m = memory_.allocate(size, kind, backing);
    if (!m) {
        std::lock_guard lock(mutex_);
        if (visibleVram) visibleVramUsed_ -= pages;
        return m;
    }
    // Outside the BAR the CPU has no pointer (the simulated GPU still reaches it at gpuVa).
    if (kind == MemoryKind::Vram && !options.hostAccess) {
        m->cpuPtr = nullptr;
    } else if (visibleVram) {
        std::lock_guard lock(mutex_);
        visibleVramHandles_.insert(m->handle);
    }
    return m;
}

Status SimDevice::freeMemory(Memory& memory) {
    if (memory && memory.kind == MemoryKind::Vram) {
        std::lock_guard lock(mutex_);
        if (visibleVramHandles_.erase(memory.handle)) visibleVramUsed_ -= memory.size;
    }
    if (memory && !memory.cpuPtr) memory.cpuPtr = reinterpret_cast<void*>(memory.gpuVa);  // GPU VA == host pointer here
    return memory_.release(memory);
}

Result<Queue> SimDevice::createQueue(const QueueOptions& options) {
    // KFD's own checks (set_queue_properties_from_user, kfd_queue_acquire_buffers).
    if (options.ringBytes < 4096 || (options.ringBytes & (options.ringBytes - 1)))
        return Error{"CREATE_QUEUE", EINVAL, "ring size " + std::to_string(options.ringBytes) + " is not a power of two >= 4096 (KFD maps the ring as exactly ring_size bytes of whole pages)"};
    if (options.percentage > uapi::kMaxQueuePercentage || options.priority > uapi::kMaxQueuePriority)
        return Error{"CREATE_QUEUE", EINVAL, "queue percentage " + std::to_string(options.percentage) + " > 100 or priority " +
                                                 std::to_string(options.priority) + " > 15"};
    const QueueBufferSizes& sizes = caps_.queueBuffers;
    Queue q;
    auto release = [&](Error e) -> Result<Queue> {
        for (Memory* m : {&q.ring, &q.pointers, &q.eop, &q.ctxSave}) (void)memory_.release(*m);
        return e;
    };
    using B = SimMemory::Backing;
    Result<Memory> m = memory_.allocate(options.ringBytes, MemoryKind::Gtt, B::Anonymous);
    if (!m) return release(m.error());
    q.ring = *m;
    if (!(m = memory_.allocate(4096, MemoryKind::Gtt, B::Anonymous))) return release(m.error());
    q.pointers = *m;
    if (!(m = memory_.allocate(sizes.eopBytes, MemoryKind::Vram, B::Anonymous))) return release(m.error());
    q.eop = *m;
    if (!(m = memory_.allocate(sizes.ctxSaveMappingBytes, MemoryKind::Gtt, B::Anonymous))) return release(m.error());
    q.ctxSave = *m;

    std::lock_guard lock(mutex_);
    uint32_t slot = 0;
    while (slot < kDoorbellSlots && doorbellUsed_[slot]) ++slot;
    if (slot == kDoorbellSlots) return release(Error{"CREATE_QUEUE", ENOSPC, "all " + std::to_string(kDoorbellSlots) + " doorbells of the process are in use"});
    doorbellUsed_[slot] = true;
    q.id = nextQueueId_++;
    q.doorbell = doorbellFrame_.as<volatile uint64_t>(uint64_t(slot) * uapi::kDoorbellBytes);
    *q.doorbell = 0;
    const pm4::Gfx gfx = caps_.gfxMajor >= 12 ? pm4::Gfx::Gfx12 : pm4::Gfx::Gfx11;
    queues_[q.id] = std::make_unique<SimQueue>(q, gfx, memory_, &dispatcher_, static_cast<SimInterruptSink&>(*this), &faults_);
    return q;
}

Status SimDevice::destroyQueue(Queue& queue) {
    std::unique_ptr<SimQueue> sim;
    {
        std::lock_guard lock(mutex_);
        const auto it = queues_.find(queue.id);
        if (it == queues_.end()) return Error{"DESTROY_QUEUE", EINVAL, "no queue " + std::to_string(queue.id)};
        sim = std::move(it->second);
        queues_.erase(it);
        doorbellUsed_[uint32_t((reinterpret_cast<uint64_t>(queue.doorbell) - doorbellFrame_.gpuVa) / uapi::kDoorbellBytes)] = false;
    }
    sim.reset();  // stops a packet that is waiting and joins the CP thread
    for (Memory* m : {&queue.ring, &queue.pointers, &queue.eop, &queue.ctxSave}) (void)memory_.release(*m);
    queue = Queue{};
    return {};
}

void SimDevice::doorbellRung(const Queue& queue) {
    std::lock_guard lock(mutex_);
    const auto it = queues_.find(queue.id);
    if (it != queues_.end()) it->second->doorbellRung();
}

Result<Event> SimDevice::createEvent(bool autoReset) {
    std::lock_guard lock(mutex_);
    // Signal event ids double as mailbox slots, as in KFD (create_signal_event); 0 is kept
    // free so that a RELEASE_MEM with INT_CTXID 0 names no event.
    uint32_t id = 1;
    while (id < uapi::kSignalEventLimit && events_.count(id)) ++id;
    if (id == uapi::kSignalEventLimit) return Error{"CREATE_EVENT", ENOSPC, "all signal event slots are in use"};
    events_[id] = EventState{id, autoReset, false};
    eventPage_.as<uint64_t>()[id] = kUnsignalledSlot;
    return Event{id, id, eventPage_.gpuAddress(uint64_t(id) * 8), eventPage_.as<volatile uint64_t>(uint64_t(id) * 8), autoReset};
}

Status SimDevice::destroyEvent(Event& event) {
    std::lock_guard lock(mutex_);
    if (!events_.erase(event.id)) return Error{"DESTROY_EVENT", EINVAL, "no event " + std::to_string(event.id)};
    event = Event{};
    return {};
}

Status SimDevice::setEvent(const Event& event) {
    std::lock_guard lock(mutex_);
    const auto it = events_.find(event.id);
    if (it == events_.end()) return Error{"SET_EVENT", EINVAL, "no event " + std::to_string(event.id)};
    signalLocked(it->first, it->second);
    eventsChanged_.notify_all();
    return {};
}

void SimDevice::signalLocked(uint32_t id, EventState& e) {
    e.signalled = true;
    // KFD acknowledges a signal by rearming its mailbox (kfd_events.c acknowledge_signal).
    std::atomic_ref<uint64_t>(eventPage_.as<uint64_t>()[id]).store(kUnsignalledSlot, std::memory_order_release);
}

void SimDevice::interrupt(uint32_t, uint32_t contextId) {
    // KFD's interrupt handler: the context id names the event when it is a valid signal event;
    // otherwise every mailbox that is no longer "unsignalled" is (kfd_signal_event_interrupt).
    std::lock_guard lock(mutex_);
    const auto it = events_.find(contextId);
    if (it != events_.end()) {
        signalLocked(it->first, it->second);
    } else {
        for (auto& [id, e] : events_)
            if (std::atomic_ref<uint64_t>(eventPage_.as<uint64_t>()[id]).load(std::memory_order_acquire) != kUnsignalledSlot) signalLocked(id, e);
    }
    eventsChanged_.notify_all();
}

void SimDevice::queueFaulted(uint32_t) {
    std::lock_guard lock(mutex_);  // waiters re-check the queues under this lock
    eventsChanged_.notify_all();
}

std::vector<QueueState> SimDevice::allQueueStates() const {
    std::vector<QueueState> states;
    std::lock_guard lock(mutex_);
    for (const auto& [id, q] : queues_) states.push_back(q->state());
    return states;
}

Status SimDevice::waitEvents(std::span<const Event> events, uint32_t timeoutMs, bool waitAll) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    std::string ids;
    for (const Event& e : events) ids += (ids.empty() ? "" : ", ") + std::to_string(e.id);
    bool faulted = false;
    {
        std::unique_lock lock(mutex_);
        for (;;) {
            size_t signalled = 0;
            for (const Event& e : events) {
                const auto it = events_.find(e.id);
                if (it == events_.end()) return Error{"WAIT_EVENTS", EINVAL, "no event " + std::to_string(e.id)};
                signalled += it->second.signalled;
            }
            if (!events.empty() && (waitAll ? signalled == events.size() : signalled > 0)) {
                for (const Event& e : events) {
                    EventState& s = events_.at(e.id);
                    if (s.autoReset) s.signalled = false;
                }
                return {};
            }
            // A faulted queue will never signal: end the wait now with the fault, as KFD's
            // memory-exception event would.
            for (const auto& [id, q] : queues_) faulted = faulted || q->fault().has_value();
            if (faulted) break;
            if (eventsChanged_.wait_until(lock, deadline) == std::cv_status::timeout && std::chrono::steady_clock::now() >= deadline) break;
        }
    }
    const std::vector<QueueState> states = allQueueStates();
    if (!faulted) return waitTimeoutError("event(s) " + ids, timeoutMs, states);
    std::string message = "GPU fault while waiting for event(s) " + ids;
    for (const QueueState& q : states) {
        message += "\n  " + q.describe();
        if (q.fault && !q.fault->decoded.empty()) message += "\n" + q.fault->decoded;
    }
    return Error{"waitEvents", EFAULT, std::move(message)};
}

QueueState SimDevice::readQueueState(const Queue& queue) const {
    std::lock_guard lock(mutex_);
    const auto it = queues_.find(queue.id);
    if (it != queues_.end()) return it->second->state();
    QueueState s;  // a destroyed or foreign queue: what its memory still says
    s.queueId = queue.id;
    return s;
}

Result<LoadedCodeObject> SimDevice::loadCodeObject(std::shared_ptr<const kernels::CodeObject> object) {
    Result<LoadedCodeObject> loaded = Device::loadCodeObject(std::move(object));
    if (!loaded) return loaded;
    for (const kernels::KernelInfo& k : loaded->object->kernels())
        dispatcher_.add(SimKernel{loaded->object, &k, loaded->image.gpuVa + k.descriptorAddress, loaded->image.gpuVa + k.entryAddress});
    return loaded;
}

Status SimDevice::unloadCodeObject(LoadedCodeObject& loaded) {
    dispatcher_.removeRange(loaded.image.gpuVa, loaded.image.size);
    return Device::unloadCodeObject(loaded);
}

}  // namespace

Result<std::unique_ptr<Device>> openSimulatedDevice(std::string_view gfxName, const SimOptions& options) {
    Result<GpuCaps> caps = capsFromGfxName(gfxName);
    if (!caps) return caps.error();
    SimExec exec = SimExec::Pocl;
    try {
        if (options.pocl) exec = options.exec ? *options.exec : simExecFromEnvironment();
    } catch (const std::exception& e) {
        return plainError("open simulated GPU", e.what());
    }
    std::shared_ptr<kernels::PoclRunner> runner = options.runner;
    // The interpreter needs no PoCL: memory is then plain host memory.
    if (exec == SimExec::Pocl && options.pocl && !runner) {
        try {
            runner = std::make_shared<kernels::PoclRunner>();
        } catch (const std::exception& e) {
            return plainError("open simulated GPU", std::string("PoCL is needed to run kernels on the simulated ") + caps->gfxName + ": " + e.what());
        }
    }
    caps->nodeIndex = options.nodeIndex;
    caps->cpuVisibleVramBytes = options.cpuVisibleVramBytes;
    auto device = std::make_unique<SimDevice>(std::move(*caps), std::move(runner), exec);
    if (Status s = device->init(); !s) return s.error();
    return std::unique_ptr<Device>(std::move(device));
}

}  // namespace zinc::kfd
