#include "kfd/device/ladder.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

#include "kernels/code_object.h"
#include "kernels/embedded.h"
#include "kernels/kernel_args.h"
#include "kfd/device/dispatch_packets.h"
#include "kfd/device/queue_writer.h"
#include "pm4/stream.h"
#include "kfd/device/hex.h"
#include "kfd/device/load_acquire.h"

namespace zinc::kfd {
namespace {

using Clock = std::chrono::steady_clock;

// The resources the rungs share, released in the destructor whatever rung failed.
class Climber {
public:
    Climber(Device& device, const LadderOptions& options)
        : d_(device), o_(options), gfx_(device.caps().gfxMajor >= 12 ? pm4::Gfx::Gfx12 : pm4::Gfx::Gfx11), storage_(1024) {}
    ~Climber();

    Result<std::string> memoryMapped();
    Result<std::string> queueCreated();
    Result<std::string> nopRetired();
    Result<std::string> doorbellObserved();
    Result<std::string> fenceRetired();
    Result<std::string> gpuWaitReleased();
    Result<std::string> copied();
    Result<std::string> trivialDispatch();

private:
    pm4::Stream stream() { return pm4::Stream(storage_, gfx_); }
    // Submits `s` plus the event signal, waits for the event.
    Status submitAndWait(pm4::Stream& s);
    Error withState(const std::string& op, const std::string& what) const {
        return plainError(op, what + "; " + d_.readQueueState(queue_).describe());
    }

    Device& d_;
    LadderOptions o_;
    pm4::Gfx gfx_;
    std::vector<uint32_t> storage_;
    Memory vram_, gtt_, doorbell_;
    Queue queue_;
    std::unique_ptr<QueueWriter> writer_;
    Event event_;
};

Climber::~Climber() {
    if (queue_.id) (void)d_.destroyQueue(queue_);
    if (event_.mailbox) (void)d_.destroyEvent(event_);
    for (Memory* m : {&vram_, &gtt_, &doorbell_}) (void)d_.freeMemory(*m);
}

Status Climber::submitAndWait(pm4::Stream& s) {
    s.releaseMem({.data = pm4::ReleaseData::Value32, .interrupt = pm4::ReleaseInterrupt::InterruptAfterWriteConfirm,
                  .address = event_.mailboxGpuVa, .value = event_.id, .intCtxId = event_.id});
    if (Status w = writer_->submit(s.dwords()); !w) return w;
    return d_.waitEvents({&event_, 1}, o_.timeoutMs);
}

Result<std::string> Climber::memoryMapped() {
    for (auto [m, kind] : {std::pair{&vram_, MemoryKind::Vram}, std::pair{&gtt_, MemoryKind::Gtt}, std::pair{&doorbell_, MemoryKind::Doorbell}}) {
        Result<Memory> r = d_.allocMemory(4096, kind, {});
        if (!r) return r.error();
        *m = *r;
    }
    // The CPU mapping works both ways for host-visible memory.
    std::memset(vram_.cpuPtr, 0x5A, 64);
    std::memset(gtt_.cpuPtr, 0, gtt_.size);
    if (vram_.as<uint8_t>()[63] != 0x5A) return plainError("memory mapped", "VRAM at " + hex(vram_.gpuVa) + " did not keep a CPU write");
    return "VRAM " + hex(vram_.gpuVa) + ", GTT " + hex(gtt_.gpuVa) + ", doorbell frame " + hex(doorbell_.gpuVa);
}

Result<std::string> Climber::queueCreated() {
    Result<Queue> q = d_.createQueue({});
    if (!q) return q.error();
    queue_ = *q;
    writer_ = std::make_unique<QueueWriter>(d_, queue_);
    Result<Event> e = d_.createEvent(true);
    if (!e) return e.error();
    event_ = *e;
    return "queue " + std::to_string(queue_.id) + ": ring " + hex(queue_.ring.gpuVa) + " (" + std::to_string(queue_.ring.size) + " bytes), eop " +
           hex(queue_.eop.size) + " bytes, ctx save " + hex(queue_.ctxSave.size) + " bytes, event " + std::to_string(event_.id);
}

Result<std::string> Climber::nopRetired() {
    pm4::Stream s = stream();
    s.nop().nop(4).nop();
    if (Status w = writer_->submit(s.dwords()); !w) return w.error();
    if (Status idle = writer_->waitIdle(o_.timeoutMs); !idle) return idle.error();
    return "rptr moved to " + hex(loadAcquire(queue_.rptr())) + " (wptr " + hex(writer_->wptr()) + ")";
}

Result<std::string> Climber::doorbellObserved() {
    // The CP has gone idle after the NOPs; a second doorbell must wake it again.
    const uint32_t before = loadAcquire(queue_.rptr());
    pm4::Stream s = stream();
    s.nop(8);
    if (Status w = writer_->submit(s.dwords()); !w) return w.error();
    if (Status idle = writer_->waitIdle(o_.timeoutMs); !idle) return idle.error();
    return "doorbell " + hex(writer_->wptr()) + " moved rptr " + hex(before) + " -> " + hex(loadAcquire(queue_.rptr()));
}

Result<std::string> Climber::fenceRetired() {
    const uint64_t value = 0xF00D'0000'0000'0001ull;
    pm4::Stream s = stream();
    s.releaseMem({.data = pm4::ReleaseData::Value64, .address = gtt_.gpuVa, .value = value});
    s.releaseMem({.data = pm4::ReleaseData::GpuClock, .address = gtt_.gpuAddress(8)});
    if (Status w = submitAndWait(s); !w) return w.error();
    const uint64_t landed = loadAcquire(gtt_.as<uint64_t>());
    if (landed != value) return withState("fence retired", "the event fired but the fence at " + hex(gtt_.gpuVa) + " holds " + hex(landed));
    return "fence " + hex(value) + " landed at " + hex(gtt_.gpuVa) + ", timestamp " + hex(loadAcquire(gtt_.as<uint64_t>(8))) + ", event " +
           std::to_string(event_.id) + " signalled";
}

Result<std::string> Climber::gpuWaitReleased() {
    uint32_t* flag = gtt_.as<uint32_t>(64);
    uint32_t* marker = gtt_.as<uint32_t>(68);
    pm4::Stream s = stream();
    s.waitRegMem({.address = gtt_.gpuAddress(64), .function = pm4::CompareFunc::Equal, .reference = 1});
    s.writeData({.address = gtt_.gpuAddress(68)}, {0x600D});
    s.releaseMem({.data = pm4::ReleaseData::Value32, .interrupt = pm4::ReleaseInterrupt::InterruptAfterWriteConfirm,
                  .address = event_.mailboxGpuVa, .value = event_.id, .intCtxId = event_.id});
    if (Status w = writer_->submit(s.dwords()); !w) return w.error();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (loadAcquire(marker) != 0) return withState("GPU wait", "the CP passed WAIT_REG_MEM before the CPU released it");
    std::atomic_ref<uint32_t>(*flag).store(1, std::memory_order_release);
    if (Status w = d_.waitEvents({&event_, 1}, o_.timeoutMs); !w) return w.error();
    if (loadAcquire(marker) != 0x600D) return withState("GPU wait", "WRITE_DATA after the wait did not land");
    return "held at WAIT_REG_MEM until the CPU wrote " + hex(gtt_.gpuAddress(64));
}

Result<std::string> Climber::copied() {
    pm4::Stream s = stream();
    s.writeData({.address = gtt_.gpuAddress(128)}, {0xC0FFEE01, 0xC0FFEE02});
    s.copyData({.source = gtt_.gpuAddress(128), .destination = vram_.gpuVa, .count64 = true});
    if (Status w = submitAndWait(s); !w) return w.error();
    if (loadAcquire(vram_.as<uint32_t>()) != 0xC0FFEE01 || loadAcquire(vram_.as<uint32_t>(4)) != 0xC0FFEE02)
        return withState("copy", "VRAM " + hex(vram_.gpuVa) + " holds " + hex(loadAcquire(vram_.as<uint64_t>())) + " after COPY_DATA");
    return std::string("WRITE_DATA to GTT, COPY_DATA GTT -> VRAM");
}

Result<std::string> Climber::trivialDispatch() {
    std::shared_ptr<const kernels::CodeObject> code = o_.code;
    const std::string gfx = d_.caps().gfxName;
    if (!code) {
        const auto bytes = kernels::embeddedCodeObject(gfx);
        if (bytes.empty()) return plainError("trivial dispatch", "no code object is built for " + gfx);
        try {
            code = std::make_shared<kernels::CodeObject>(kernels::CodeObject::parse(bytes, "embedded " + gfx));
        } catch (const std::exception& e) {
            return plainError("trivial dispatch", e.what());
        }
    }
    Result<LoadedCodeObject> loaded = d_.loadCodeObject(code);
    if (!loaded) return loaded.error();
    struct Unload {
        Device& d;
        LoadedCodeObject& l;
        ~Unload() { (void)d.unloadCodeObject(l); }
    } unload{d_, *loaded};
    Result<LoadedKernel> add = loaded->kernel("add");
    if (!add) return add.error();
    // out = a + b over 256 floats in VRAM, kernarg segment in GTT.
    constexpr int32_t n = 256;
    Result<Memory> buffers = d_.allocMemory(3 * n * 4, MemoryKind::Vram, {});
    if (!buffers) return buffers.error();
    struct Free {
        Device& d;
        Memory m;
        ~Free() { (void)d.freeMemory(m); }
    } freeBuffers{d_, *buffers};
    float* a = buffers->as<float>();
    for (int32_t i = 0; i < n; ++i) {
        a[i] = float(i);
        a[n + i] = 2.0f;
        a[2 * n + i] = 0.0f;
    }
    const kernels::AddArgs args{buffers->gpuVa, buffers->gpuAddress(n * 4), buffers->gpuAddress(2 * n * 4), n, n};
    std::memcpy(gtt_.as<uint8_t>(1024), &args, sizeof args);
    pm4::Stream s = stream();
    if (Status l = emitLaunch(s, *add, {.kernargAddress = gtt_.gpuAddress(1024), .groups = {1, 1, 1}}); !l) return l.error();
    if (Status w = submitAndWait(s); !w) return w.error();
    for (int32_t i = 0; i < n; ++i)
        if (a[2 * n + i] != float(i) + 2.0f)
            return withState("trivial dispatch", "kernel add wrote " + std::to_string(a[2 * n + i]) + " at element " + std::to_string(i) +
                                                     ", expected " + std::to_string(float(i) + 2.0f));
    return "kernel add (" + hex(add->entryAddress) + ") on 256 floats matched";
}

}  // namespace

std::vector<Rung> climbLadder(Device& device, const LadderOptions& options) {
    std::vector<Rung> rungs;
    rungs.push_back({"device found", true, false, 0, device.name() + ": " + describe(device.caps())});
    Climber c(device, options);
    const std::vector<std::pair<const char*, std::function<Result<std::string>()>>> steps = {
        {"memory mapped (VRAM, GTT, doorbell)", [&] { return c.memoryMapped(); }},
        {"queue created", [&] { return c.queueCreated(); }},
        {"NOP retired", [&] { return c.nopRetired(); }},
        {"doorbell observed", [&] { return c.doorbellObserved(); }},
        {"fence retired", [&] { return c.fenceRetired(); }},
        {"GPU wait released by the CPU", [&] { return c.gpuWaitReleased(); }},
        {"copy (WRITE_DATA/COPY_DATA)", [&] { return c.copied(); }},
        {"trivial dispatch", [&] { return c.trivialDispatch(); }},
    };
    bool failed = false;
    for (const auto& [name, step] : steps) {
        Rung r{name, false, failed, 0, ""};
        if (std::string(name) == "trivial dispatch" && !options.dispatch) r.skipped = true;
        if (!r.skipped) {
            const auto start = Clock::now();
            Result<std::string> result = step();
            r.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
            r.ok = result.ok();
            r.detail = result.ok() ? *result : result.error().describe();
            failed = !r.ok;
        }
        rungs.push_back(std::move(r));
    }
    return rungs;
}

std::string formatLadder(const std::vector<Rung>& rungs) {
    std::string out;
    char line[96];
    for (const Rung& r : rungs) {
        std::snprintf(line, sizeof line, "%-4s %8.1f ms  ", r.skipped ? "skip" : r.ok ? "ok" : "FAIL", r.ms);
        out += line + r.name + (r.detail.empty() ? "" : ": " + r.detail) + "\n";
    }
    return out;
}

}  // namespace zinc::kfd
