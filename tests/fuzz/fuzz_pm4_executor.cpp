// Arbitrary dwords executed by the simulated GPU's command processor (pm4::Executor), three
// ways: as a host stream, as an IB in GPU memory (so its own INDIRECT_BUFFERs, WRITE_DATA and
// COPY_DATA can reach it) and as a ring that wraps. Every outcome must be a clean stop or a
// Fault naming the packet; waits end by their timeout (a stepping clock makes that quick).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "pm4/executor.h"

using namespace zinc::pm4;

namespace {

constexpr uint64_t kBase = 0x10000;           // the one mapped window
constexpr uint64_t kBytes = 64 * 1024;
constexpr uint32_t kRingDwords = 1024;         // the ring sits at the end of the window
constexpr uint64_t kRingBase = kBase + kBytes - 4 * kRingDwords;

// Each look at the time moves it 100 us: a WAIT_REG_MEM gives up after about ten polls.
class SteppingClock final : public Clock {
public:
    uint64_t gpuClock() override { return ++ticks_; }
    uint64_t systemClock() override { return ticks_; }
    uint64_t nowNs() override { return now_ += 100'000; }
    void idle() override {}

private:
    uint64_t ticks_ = 0, now_ = 0;
};

// Accepts every dispatch the registers describe (running kernels is PoCL's part, not fuzzed).
class CheckingDispatch final : public DispatchHandler {
public:
    DispatchResult dispatch(const DispatchInfo& info) override {
        if (!info.registers) fail("a dispatch without its register snapshot");
        return {};
    }
    [[noreturn]] static void fail(const char* what) {
        std::fprintf(stderr, "fuzz_pm4_executor: %s\n", what);
        std::abort();
    }
};

// A CP runs until its queue is destroyed; an IB that chains to itself never ends on its own.
// The harness stops the executor after a packet budget, as destroying the queue would.
class PacketBudget final : public ExecutionObserver {
public:
    void onPacket(uint32_t, uint64_t) override {
        if (++packets_ > 100'000) stop.store(true);
    }
    std::atomic<bool> stop{false};

private:
    uint64_t packets_ = 0;
};

void checkFault(const ExecResult& r, Gfx gfx) {
    if (r.ok()) return;
    if (r.fault->packetDwords.size() > 32) CheckingDispatch::fail("a fault keeps more than 32 packet dwords");
    (void)r.fault->report(gfx);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const uint32_t dwords = uint32_t(std::min<size_t>(size / 4, (kBytes - 4 * kRingDwords) / 4));
    std::vector<uint32_t> stream(dwords);
    if (dwords) std::memcpy(stream.data(), data, size_t(dwords) * 4);
    const Gfx gfx = size % 2 ? Gfx::Gfx12 : Gfx::Gfx11;
    LinearMemory memory(kBase, kBytes);
    SteppingClock clock;
    CheckingDispatch dispatch;
    PacketBudget budget;
    const ExecutorOptions options{.waitTimeoutNs = 1'000'000, .stop = &budget.stop};
    {
        Executor host(gfx, memory, clock, &dispatch, &budget, options);
        checkFault(host.execute(stream), gfx);
    }
    if (dwords && !memory.write(kBase, stream)) CheckingDispatch::fail("the window refused the stream");
    {
        Executor ib(gfx, memory, clock, &dispatch, &budget, options);
        checkFault(ib.executeAt(kBase, dwords), gfx);
    }
    {
        // The first kRingDwords dwords as a ring's contents, starting near its end so it wraps.
        const uint32_t n = std::min(dwords, kRingDwords);
        const uint64_t rptr = kRingDwords - n / 2;
        for (uint32_t i = 0; i < n; ++i) memory.store(kRingBase + 4 * ((rptr + i) % kRingDwords), stream[i]);
        Executor ring(gfx, memory, clock, &dispatch, &budget, options);
        const ExecResult r = ring.executeRing({.base = kRingBase, .sizeDwords = kRingDwords}, rptr, rptr + n);
        checkFault(r, gfx);
        if (r.position < rptr || r.position > rptr + n) CheckingDispatch::fail("rptr outside [rptr, wptr]");
    }
    return 0;
}
