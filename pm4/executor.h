#pragma once
// pm4::Executor: the simulated GPU's command processor. It executes a PM4 stream (a host span,
// an IB in GPU memory, or a ring between rptr and wptr) packet by packet, as a compute queue's
// CP would: SET_SH_REG into a register file, dispatches handed to a DispatchHandler, memory
// reached only through a MemoryInterface, time through a Clock. Dispatches overlap as they do on
// hardware (ExecutorOptions::overlapDispatches): one is held in flight until something waits for
// it, so a stream without its barriers computes wrong results here too. Pure: no threads, no system
// calls; a WAIT_REG_MEM really waits, polling memory and calling Clock::idle() between polls,
// until the compare passes, a stop flag is raised or a timeout passes. COND_EXEC reads its word
// and skips the dwords it guards when that word is 0.
//
// Anything the CP cannot do (bad address, unknown packet, malformed header, a wait given up)
// stops execution and returns a Fault: {dword offset, IB nesting, header, packet, reason}, like a
// GPU fault stops its queue.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pm4/decoder.h"
#include "pm4/field.h"
#include "pm4/memory.h"
#include "pm4/registers.h"
#include "pm4/ring.h"

namespace zinc::pm4 {

// The SH register window a compute queue programs with SET_SH_REG.
class RegisterFile {
public:
    static bool contains(uint32_t address) { return address >= kShRegStart && address < kShRegEnd; }
    uint32_t get(uint32_t address) const { return contains(address) ? values_[address - kShRegStart] : 0; }
    void set(uint32_t address, uint32_t value) {
        if (contains(address)) values_[address - kShRegStart] = value;
    }
    uint32_t get(const Register& reg) const { return get(reg.address); }

private:
    std::array<uint32_t, kShRegCount> values_{};
};

class Clock {
public:
    virtual ~Clock() = default;
    virtual uint64_t gpuClock() = 0;     // RELEASE_MEM DATA_SEL 3, COPY_DATA SRC_SEL 9
    virtual uint64_t systemClock() = 0;  // RELEASE_MEM DATA_SEL 4, COPY_DATA SRC_SEL 10
    virtual uint64_t nowNs() = 0;        // monotonic time, for wait timeouts
    virtual void idle() = 0;             // between two polls of a WAIT_REG_MEM (yield, sleep)
};

// What a dispatch needs, read out of the register file when DISPATCH_* executes.
struct DispatchInfo {
    bool indirect = false;
    uint64_t programAddress = 0;           // COMPUTE_PGM_HI:LO << 8
    std::array<uint32_t, 16> userData{};   // COMPUTE_USER_DATA_0..15
    uint32_t userSgprCount = 0;            // COMPUTE_PGM_RSRC2.USER_SGPR
    std::array<uint32_t, 3> dim{};         // DIM_X/Y/Z as the packet gave them (end positions)
    std::array<uint32_t, 3> start{};       // first workgroup (0 with FORCE_START_AT_000)
    std::array<uint32_t, 3> groups{};      // workgroups per dimension
    std::array<uint32_t, 3> groupSize{};   // COMPUTE_NUM_THREAD_*.NUM_THREAD_FULL
    bool threadDimensions = false;         // USE_THREAD_DIMENSIONS: dim counts threads
    bool wave32 = false;                   // CS_W32_EN
    uint32_t initiator = 0;
    uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
    uint32_t ldsBytes = 0;                 // RSRC2.LDS_SIZE x 512
    uint64_t scratchBase = 0;              // COMPUTE_DISPATCH_SCRATCH_BASE_HI:LO << 8
    uint32_t tmpringSize = 0;
    const RegisterFile* registers = nullptr;  // the whole snapshot, valid during the call
};

struct DispatchResult {
    bool ok = true;
    std::string error;  // why the kernel could not run; becomes the fault reason
};

// Which shader-side caches an ACQUIRE_MEM or RELEASE_MEM invalidated (GCR_CNTL, by generation:
// gfx11 needs GL1 invalidated too; gfx12 has no GL1).
struct CacheInvalidate {
    bool vector = false;  // GLV (GL0) and GL1: what global loads read through
    bool scalar = false;  // GLK (the scalar cache) and GL1: what s_load reads through
};

class DispatchHandler {
public:
    virtual ~DispatchHandler() = default;
    // Runs the dispatch to completion before returning. When dispatches overlap, the executor
    // decides when (and in which order) held dispatches run; the handler just runs one.
    virtual DispatchResult dispatch(const DispatchInfo& info) = 0;
    // The shader engines' caches: the CP wrote memory (WRITE_DATA, COPY_DATA, RELEASE_MEM data)
    // that a CU's cache may hold an older copy of; an ACQUIRE_MEM/RELEASE_MEM invalidated caches.
    virtual void cpWrote(uint64_t /*address*/, uint64_t /*bytes*/) {}
    virtual void invalidate(const CacheInvalidate& /*what*/) {}
};
// GCR_CNTL of ACQUIRE_MEM / RELEASE_MEM (with RELEASE_MEM's separate GLK_INV bit) as caches invalidated.
CacheInvalidate acquireInvalidates(Gfx gfx, uint32_t gcrCntl);
CacheInvalidate releaseInvalidates(Gfx gfx, uint32_t gcrCntl, bool glkInv);

// A RELEASE_MEM that retired: what was written where, and the interrupt it asked for.
struct ReleaseEvent {
    uint32_t eventType = 0;
    uint32_t eventIndex = 0;
    uint32_t gcrCntl = 0;
    uint32_t dstSel = 0;
    uint32_t dataSel = 0;
    uint32_t intSel = 0;  // != 0: an interrupt carrying intCtxId (KFD event signalling)
    uint64_t address = 0;
    uint64_t data = 0;    // the value or clock written (nothing when dataSel is 0)
    uint32_t intCtxId = 0;
};

// Optional hooks: the simulated KFD queue signals events and publishes rptr through these.
class ExecutionObserver {
public:
    virtual ~ExecutionObserver() = default;
    virtual void onRelease(const ReleaseEvent&) {}
    virtual void onEventWrite(uint32_t /*eventType*/, uint32_t /*eventIndex*/) {}
    virtual void onRptr(uint64_t /*rptr*/) {}  // ring execution: a packet has been consumed
    // Before each packet runs: its IB depth (0 = the top-level stream or ring) and GPU address
    // (0 for a host stream). Where the CP is when a wait never ends.
    virtual void onPacket(uint32_t /*depth*/, uint64_t /*address*/) {}
    // Before a RELEASE_MEM writes its data: the value written (a simulated GPU corrupts it on request).
    virtual uint64_t releaseData(const ReleaseEvent&, uint64_t data) { return data; }
};

enum class FaultKind {
    BadAddress,       // an access to unmapped (or misaligned) memory
    MalformedPacket,  // bad type, COUNT past the end, wrong body length, bad field value
    UnknownOpcode,
    Unsupported,      // a valid packet form this CP model does not implement
    IbTooDeep,
    BadDispatch,      // a dispatch the registers cannot describe
    DispatchFailed,   // the DispatchHandler refused or failed
    WaitTimeout,
    Stopped,          // the stop flag was raised
};
std::string_view faultKindName(FaultKind kind);

struct Fault {
    FaultKind kind = FaultKind::MalformedPacket;
    uint64_t offset = 0;         // dword offset of the packet in its stream (ring: the ring pointer)
    uint32_t ibDepth = 0;        // 0 = the top-level stream or ring, 1 = an IB it called, ...
    uint64_t streamAddress = 0;  // GPU address of that stream's first dword (0: host stream)
    uint64_t packetAddress = 0;  // GPU address of the packet's header (0: host stream)
    uint32_t header = 0;
    std::string packet;          // the opcode name, or what the header is
    std::string reason;
    std::vector<uint32_t> packetDwords;  // the packet as fetched (at most 32 dwords)

    // One line: "<kind> at dword N (IB depth d @ 0x...): PACKET header 0x...: reason".
    std::string describe() const;
    // describe() plus the packet decoded field by field.
    std::string report(Gfx gfx) const;
};

struct ExecutorOptions {
    uint32_t maxIbDepth = 2;                  // the CP's IB1 / IB2 levels
    uint64_t waitTimeoutNs = 0;               // 0: wait until stopped. Reset when the polled value changes.
    const std::atomic<bool>* stop = nullptr;  // checked before every packet and every poll
    // A dispatch is held in flight until a CS_PARTIAL_FLUSH, a RELEASE_MEM, a WAIT_REG_MEM or the
    // end of the stream waits for it; the held dispatches then run latest first (a schedule the
    // hardware may produce when the earlier one's waves stall), so a dispatch that reads what an
    // earlier one writes, with no wait between them, reads it before it is written. Off: each
    // dispatch runs when its packet executes.
    bool overlapDispatches = true;
};

struct ExecStats {
    uint64_t packets = 0;
    uint64_t dispatches = 0;
    uint64_t releases = 0;
    uint64_t waits = 0;
    uint64_t polls = 0;
    uint64_t indirectBuffers = 0;
    uint64_t overlapped = 0;  // dispatches that ran after a later one (no wait between them)
    uint64_t condExecs = 0;       // COND_EXEC packets met
    uint64_t condExecSkips = 0;   // of them, those that skipped their dwords
};

struct ExecResult {
    std::optional<Fault> fault;
    uint64_t position = 0;  // top level: where execution stopped (end, or the faulting packet)
    bool ok() const { return !fault; }
};

class Executor {
public:
    Executor(Gfx gfx, MemoryInterface& memory, Clock& clock, DispatchHandler* dispatch = nullptr,
             ExecutionObserver* observer = nullptr, ExecutorOptions options = {});

    // A stream in host memory (tests, `pm4 decode`-style replays).
    ExecResult execute(std::span<const uint32_t> stream);
    // A stream of `dwords` at a GPU address, executed as the top level.
    ExecResult executeAt(uint64_t address, uint32_t dwords);
    // A ring's packets in [rptr, wptr); on return `position` is the new rptr (on a fault, the
    // faulting packet's). onRptr() is called after each packet.
    ExecResult executeRing(const RingLayout& ring, uint64_t rptr, uint64_t wptr);

    Gfx gfx() const { return gfx_; }
    RegisterFile& registers() { return registers_; }
    const ExecStats& stats() const { return stats_; }
    const std::optional<ReleaseEvent>& lastRelease() const { return lastRelease_; }
    void setOptions(const ExecutorOptions& options) { options_ = options; }

private:
    struct Source;
    struct Step;
    ExecResult runTop(const Source& source);
    ExecResult run(Source source, uint32_t depth);
    bool fetch(const Source& source, uint64_t position, std::span<uint32_t> out);
    bool stopRequested() const;
    Step executePacket(const PacketView& packet, uint32_t depth);
    Step stepSetShReg(const PacketView& packet);
    Step stepDispatch(const PacketView& packet, bool indirect);
    Step stepReleaseMem(const PacketView& packet);
    Step stepWaitRegMem(const PacketView& packet);
    Step stepWriteData(const PacketView& packet);
    Step stepCopyData(const PacketView& packet);
    Step stepDmaData(const PacketView& packet);
    Step stepIndirectBuffer(const PacketView& packet, uint32_t depth);
    Step stepCondExec(const PacketView& packet);
    Step stepEventWrite(const PacketView& packet);
    DispatchInfo describeDispatch(const std::array<uint32_t, 3>& dims, uint32_t initiator, bool indirect) const;
    // Runs the held dispatches (latest first); a failure comes back as the located fault of the
    // dispatch packet that failed.
    Step drainDispatches();
    void cpWrote(uint64_t address, uint64_t bytes);

    // A dispatch in flight: what it runs with and where its packet was, for a fault.
    struct HeldDispatch {
        DispatchInfo info;
        std::unique_ptr<RegisterFile> registers;
        Fault where;
    };
    // Where the packet executing now is (set by run() before executePacket).
    struct PacketPlace {
        uint64_t offset = 0, streamAddress = 0, packetAddress = 0;
        uint32_t depth = 0, header = 0;
        const std::vector<uint32_t>* dwords = nullptr;
    };

    Gfx gfx_;
    MemoryInterface& memory_;
    Clock& clock_;
    DispatchHandler* dispatch_;
    ExecutionObserver* observer_;
    ExecutorOptions options_;
    RegisterFile registers_;
    ExecStats stats_;
    std::optional<ReleaseEvent> lastRelease_;
    std::vector<std::vector<uint32_t>> scratch_;  // one packet buffer per IB level
    std::vector<HeldDispatch> held_;              // dispatches in flight, in issue order
    PacketPlace place_;
    std::vector<uint32_t> dmaScratch_;            // DMA_DATA's bounce buffer
};

}  // namespace zinc::pm4
