#pragma once
// What the pm4 tests share: clocks (a real one for cross-thread waits, a stepping one for
// deterministic timeouts), a dispatch recorder, an observer that keeps what it saw, and a
// one-packet decode helper.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "pm4/decoder.h"
#include "pm4/executor.h"
#include "pm4/stream.h"

namespace zinc::pm4::test {

// Wall time and a yielding idle: for waits released by another thread.
class HostClock final : public Clock {
public:
    uint64_t gpuClock() override { return 0x1000 + ++ticks_; }
    uint64_t systemClock() override { return nowNs(); }
    uint64_t nowNs() override {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now().time_since_epoch())
                                         .count());
    }
    void idle() override { std::this_thread::yield(); }

private:
    uint64_t ticks_ = 0;
};

// Time that advances `stepNs` at every look, and known clock counter values.
class SteppingClock final : public Clock {
public:
    explicit SteppingClock(uint64_t stepNs = 1'000'000) : stepNs_(stepNs) {}
    uint64_t gpuClock() override { return 0x0000'0012'3456'789Aull; }
    uint64_t systemClock() override { return 0x0000'00AB'CDEF'0123ull; }
    uint64_t nowNs() override { return now_ += stepNs_; }
    void idle() override { ++idles; }
    uint64_t idles = 0;

private:
    uint64_t stepNs_;
    uint64_t now_ = 0;
};

class RecordingDispatch final : public DispatchHandler {
public:
    DispatchResult dispatch(const DispatchInfo& info) override {
        calls.push_back(info);
        calls.back().registers = nullptr;  // the snapshot pointer is valid only during the call
        userData0.push_back(info.registers ? info.registers->get(gfx11::COMPUTE_USER_DATA_0) : 0);
        return result;
    }
    void cpWrote(uint64_t address, uint64_t bytes) override { cpWrites.emplace_back(address, bytes); }
    void invalidate(const CacheInvalidate& what) override { invalidates.push_back(what); }
    std::vector<DispatchInfo> calls;
    std::vector<uint32_t> userData0;  // COMPUTE_USER_DATA_0 from each call's register snapshot
    std::vector<std::pair<uint64_t, uint64_t>> cpWrites;
    std::vector<CacheInvalidate> invalidates;
    DispatchResult result;
};

class RecordingObserver final : public ExecutionObserver {
public:
    void onRelease(const ReleaseEvent& e) override { releases.push_back(e); }
    void onEventWrite(uint32_t type, uint32_t index) override { events.push_back({type, index}); }
    void onRptr(uint64_t rptr) override { rptrs.push_back(rptr); }
    std::vector<ReleaseEvent> releases;
    std::vector<std::pair<uint32_t, uint32_t>> events;
    std::vector<uint64_t> rptrs;
};

// The single packet of a stream, decoded; fails the test on any error or note.
inline DecodedPacket onlyPacket(const Stream& s) {
    Decoded d = decode(s.dwords(), s.gfx());
    EXPECT_FALSE(d.error) << d.error->describe();
    EXPECT_EQ(d.packets.size(), 1u) << formatStream(d, s.gfx());
    if (d.packets.empty()) return {};
    for (const std::string& note : d.packets[0].notes) ADD_FAILURE() << "note: " << note;
    return d.packets[0];
}

inline std::string gfxParamName(const ::testing::TestParamInfo<Gfx>& info) {
    return info.param == Gfx::Gfx11 ? "gfx11" : "gfx12";
}

}  // namespace zinc::pm4::test
