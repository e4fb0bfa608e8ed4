#include "pm4/executor.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "pm4/stream.h"  // CompareFunc, compareHolds
#include "pm4/printf_string.h"

namespace zinc::pm4 {
namespace {

// Field bits the executor reads are the same on gfx12 (see the static_asserts in stream.cpp);
// where a generation differs the code picks the table by gfx.
namespace RM = gfx11::RELEASE_MEM;
namespace WRM = gfx11::WAIT_REG_MEM;
namespace WD = gfx11::WRITE_DATA;
namespace CD = gfx11::COPY_DATA;
namespace DMA = gfx11::DMA_DATA;
namespace IB = gfx11::INDIRECT_BUFFER;
namespace EW = gfx11::EVENT_WRITE;
namespace DD = gfx11::DISPATCH_DIRECT;
namespace DI = gfx11::DISPATCH_INDIRECT;
namespace AM = gfx11::ACQUIRE_MEM;

std::string nameOf(const Field& f, uint32_t value) {
    const std::string_view n = f.nameOf(value);
    return n.empty() ? format("%u", value) : std::string(n);
}

}  // namespace

struct Executor::Source {
    enum class Kind { Host, Memory, Ring };
    Kind kind = Kind::Host;
    std::span<const uint32_t> host;
    uint64_t base = 0;  // Memory: address of dword 0; Ring: ring base
    uint32_t ringMask = 0;
    uint64_t begin = 0;  // positions [begin, end): host/memory dword index, or ring pointer
    uint64_t end = 0;

    uint64_t addressOf(uint64_t pos) const {
        if (kind == Kind::Memory) return base + 4 * pos;
        if (kind == Kind::Ring) return base + 4 * (pos & ringMask);
        return 0;
    }
    const char* what() const { return kind == Kind::Ring ? "ring" : kind == Kind::Memory ? "IB" : "stream"; }
};

struct Executor::Step {
    std::optional<Fault> fault;  // kind + reason; located by executePacket unless `located`
    bool located = false;
    std::optional<Source> chain;  // INDIRECT_BUFFER with CHAIN: continue there instead
    uint32_t skipDwords = 0;      // COND_EXEC whose word was 0: the dwords after it not run

    static Step fail(FaultKind kind, std::string reason) {
        Step s;
        s.fault = Fault{};
        s.fault->kind = kind;
        s.fault->reason = std::move(reason);
        return s;
    }
};

std::string_view faultKindName(FaultKind kind) {
    switch (kind) {
        case FaultKind::BadAddress: return "bad address";
        case FaultKind::MalformedPacket: return "malformed packet";
        case FaultKind::UnknownOpcode: return "unknown opcode";
        case FaultKind::Unsupported: return "unsupported packet";
        case FaultKind::IbTooDeep: return "IB nesting too deep";
        case FaultKind::BadDispatch: return "bad dispatch";
        case FaultKind::DispatchFailed: return "dispatch failed";
        case FaultKind::WaitTimeout: return "wait timeout";
        case FaultKind::Stopped: return "stopped";
    }
    return "fault";
}

std::string Fault::describe() const {
    std::string where = format("dword %" PRIu64, offset);
    if (ibDepth > 0) where += format(" of the IB at 0x%" PRIX64 " (depth %u)", streamAddress, ibDepth);
    if (packetAddress != 0) where += format(", packet at 0x%" PRIX64, packetAddress);
    return std::string(faultKindName(kind)) + " at " + where + ": " + packet + format(", header 0x%08X: ", header) +
           reason;
}

std::string Fault::report(Gfx gfx) const {
    std::string out = describe() + "\n";
    if (packetDwords.empty()) return out;
    const ParsedPacket p = parsePacket(packetDwords, 0, gfx);
    if (p.ok()) return out + formatPacket(decodePacket(p.packet, gfx), gfx);
    out += "    packet dwords:";
    for (uint32_t d : packetDwords) out += format(" %08X", d);
    return out + "\n";
}

Executor::Executor(Gfx gfx, MemoryInterface& memory, Clock& clock, DispatchHandler* dispatch,
                   ExecutionObserver* observer, ExecutorOptions options)
    : gfx_(gfx), memory_(memory), clock_(clock), dispatch_(dispatch), observer_(observer), options_(options) {}

ExecResult Executor::execute(std::span<const uint32_t> stream) {
    Source s;
    s.kind = Source::Kind::Host;
    s.host = stream;
    s.end = stream.size();
    return runTop(s);
}

ExecResult Executor::executeAt(uint64_t address, uint32_t dwords) {
    Source s;
    s.kind = Source::Kind::Memory;
    s.base = address;
    s.end = dwords;
    return runTop(s);
}

ExecResult Executor::executeRing(const RingLayout& ring, uint64_t rptr, uint64_t wptr) {
    Source s;
    s.kind = Source::Kind::Ring;
    s.base = ring.base;
    s.ringMask = ring.mask();
    s.begin = rptr;
    s.end = wptr;
    ExecResult bad;
    bad.position = rptr;
    if (const auto why = ring.check()) {
        bad.fault = Fault{FaultKind::MalformedPacket, rptr, 0, ring.base, 0, 0, "ring", *why, {}};
    } else if (wptr < rptr || wptr - rptr > ring.sizeDwords) {
        bad.fault = Fault{FaultKind::MalformedPacket, rptr, 0, ring.base, ring.addressOf(rptr), 0, "ring",
                          format("wptr %" PRIu64 " - rptr %" PRIu64 " is outside 0..%u: the host overran the ring",
                                 wptr, rptr, ring.sizeDwords),
                          {}};
    }
    if (bad.fault) return bad;
    return runTop(s);
}

CacheInvalidate acquireInvalidates(Gfx gfx, uint32_t gcr) {
    constexpr Field glk = fieldNamed(gfx11::ACQUIRE_MEM_GCR_FIELDS, "GLK_INV");
    constexpr Field glv = fieldNamed(gfx11::ACQUIRE_MEM_GCR_FIELDS, "GLV_INV");
    constexpr Field gl1 = fieldNamed(gfx11::ACQUIRE_MEM_GCR_FIELDS, "GL1_INV");
    const bool l1 = gfx != Gfx::Gfx11 || gl1.get(gcr);  // gfx12 has no GL1
    return {.vector = glv.get(gcr) && l1, .scalar = glk.get(gcr) && l1};
}

CacheInvalidate releaseInvalidates(Gfx gfx, uint32_t gcr, bool glkInv) {
    constexpr Field glv = fieldNamed(gfx11::RELEASE_MEM_GCR_FIELDS, "GLV_INV");
    constexpr Field gl1 = fieldNamed(gfx11::RELEASE_MEM_GCR_FIELDS, "GL1_INV");
    const bool l1 = gfx != Gfx::Gfx11 || gl1.get(gcr);
    return {.vector = glv.get(gcr) && l1, .scalar = glkInv && l1};
}

ExecResult Executor::runTop(const Source& source) {
    if (scratch_.size() < options_.maxIbDepth + 1) scratch_.resize(options_.maxIbDepth + 1);
    ExecResult r = run(source, 0);
    if (r.fault) {
        held_.clear();  // the queue stopped: what was in flight is abandoned with it
        return r;
    }
    // The queue runs dry: everything in flight completes.
    Step drained = drainDispatches();
    if (drained.fault) r.fault = std::move(drained.fault);
    return r;
}

Executor::Step Executor::drainDispatches() {
    if (held_.empty()) return {};
    std::vector<HeldDispatch> held = std::move(held_);
    held_.clear();
    stats_.overlapped += held.size() - 1;
    for (auto it = held.rbegin(); it != held.rend(); ++it) {
        it->info.registers = it->registers.get();
        const DispatchResult result = dispatch_->dispatch(it->info);
        if (!result.ok) {
            Step step;
            step.fault = std::move(it->where);
            step.fault->reason = result.error;
            step.located = true;
            return step;
        }
    }
    return {};
}

void Executor::cpWrote(uint64_t address, uint64_t bytes) {
    if (dispatch_) dispatch_->cpWrote(address, bytes);
}

bool Executor::stopRequested() const { return options_.stop && options_.stop->load(std::memory_order_acquire); }

bool Executor::fetch(const Source& s, uint64_t pos, std::span<uint32_t> out) {
    switch (s.kind) {
        case Source::Kind::Host:
            if (pos > s.host.size() || out.size() > s.host.size() - pos) return false;
            std::copy_n(s.host.begin() + static_cast<ptrdiff_t>(pos), out.size(), out.begin());
            return true;
        case Source::Kind::Memory: return memory_.read(s.addressOf(pos), out);
        case Source::Kind::Ring: {
            // A packet may straddle the end of the ring: read up to the end, then from slot 0.
            const uint64_t slot = pos & s.ringMask;
            const size_t first = std::min<uint64_t>(out.size(), uint64_t{s.ringMask} + 1 - slot);
            if (!memory_.read(s.addressOf(pos), out.first(first))) return false;
            return first == out.size() || memory_.read(s.base, out.subspan(first));
        }
    }
    return false;
}

ExecResult Executor::run(Source src, uint32_t depth) {
    std::vector<uint32_t>& buf = scratch_[depth];
    uint64_t pos = src.begin;
    uint32_t header = 0;
    auto located = [&](Fault f) {
        f.offset = pos;
        f.ibDepth = depth;
        f.streamAddress = src.kind == Source::Kind::Host ? 0 : src.base;
        f.packetAddress = src.addressOf(pos);
        f.header = header;
        if (f.packet.empty()) f.packet = buf.empty() ? "(packet not fetched)" : packetName(header, gfx_);
        f.packetDwords.assign(buf.begin(), buf.begin() + static_cast<ptrdiff_t>(std::min<size_t>(buf.size(), 32)));
        ExecResult r;
        r.fault = std::move(f);
        r.position = pos;
        return r;
    };
    auto fail = [&](FaultKind kind, std::string reason) { return located(*Step::fail(kind, std::move(reason)).fault); };

    while (pos < src.end) {
        buf.clear();
        header = 0;
        if (stopRequested()) return fail(FaultKind::Stopped, "the queue was stopped before this packet");
        if (!fetch(src, pos, {&header, 1}))
            return fail(FaultKind::BadAddress,
                        format("cannot fetch the packet header at 0x%" PRIX64 ": address not mapped", src.addressOf(pos)));
        const HeaderInfo h = decodeHeader(header);
        const uint64_t remaining = src.end - pos;
        if ((h.type == 2 || h.type == 3) && h.dwords > remaining)
            return fail(FaultKind::MalformedPacket,
                        format("COUNT %u makes a %u-dword packet but only %" PRIu64 " dwords remain in the %s",
                               h.count, h.dwords, remaining, src.what()));
        buf.resize(h.type == 2 || h.type == 3 ? h.dwords : 1);
        if (!fetch(src, pos, buf)) {
            buf.assign(1, header);
            return fail(FaultKind::BadAddress, format("cannot fetch the %u-dword packet at 0x%" PRIX64
                                                      ": address not mapped", h.dwords, src.addressOf(pos)));
        }
        const ParsedPacket parsed = parsePacket(buf, 0, gfx_);
        if (!parsed.ok()) {
            const bool unknown = (h.type == 3) && !parsed.packet.spec;
            return fail(unknown ? FaultKind::UnknownOpcode : FaultKind::MalformedPacket, parsed.error->reason);
        }
        ++stats_.packets;
        if (observer_) observer_->onPacket(depth, src.addressOf(pos));
        place_ = {pos, src.kind == Source::Kind::Host ? 0 : src.base, src.addressOf(pos), depth, header, &buf};
        Step step = executePacket(parsed.packet, depth);
        if (step.fault) {
            if (step.located) {
                ExecResult r;
                r.fault = std::move(step.fault);
                r.position = pos;
                return r;
            }
            return located(std::move(*step.fault));
        }
        pos += parsed.packet.dwords + step.skipDwords;
        if (src.kind == Source::Kind::Ring && observer_) observer_->onRptr(pos);
        if (step.chain) {
            src = *step.chain;
            pos = src.begin;
        }
    }
    ExecResult done;
    done.position = pos;
    return done;
}

Executor::Step Executor::executePacket(const PacketView& v, uint32_t depth) {
    if (v.type == 2) return {};
    switch (v.spec->opcode) {
        case Opcode::NOP: return {};
        case Opcode::ACQUIRE_MEM:
            if (dispatch_) dispatch_->invalidate(acquireInvalidates(gfx_, v.get(AM::GCR_CNTL)));
            return {};
        case Opcode::SET_SH_REG: return stepSetShReg(v);
        case Opcode::DISPATCH_DIRECT: return stepDispatch(v, false);
        case Opcode::DISPATCH_INDIRECT: return stepDispatch(v, true);
        case Opcode::RELEASE_MEM: return stepReleaseMem(v);
        case Opcode::WAIT_REG_MEM: return stepWaitRegMem(v);
        case Opcode::WRITE_DATA: return stepWriteData(v);
        case Opcode::COPY_DATA: return stepCopyData(v);
        case Opcode::DMA_DATA: return stepDmaData(v);
        case Opcode::INDIRECT_BUFFER: return stepIndirectBuffer(v, depth);
        case Opcode::EVENT_WRITE: return stepEventWrite(v);
        case Opcode::COND_EXEC: return stepCondExec(v);
    }
    return Step::fail(FaultKind::UnknownOpcode, "no executor for this opcode");
}

Executor::Step Executor::stepSetShReg(const PacketView& v) {
    const uint32_t first = kShRegStart + gfx11::SET_SH_REG::REG_OFFSET.get(v.body[0]);
    for (uint32_t i = 1; i < v.body.size(); ++i) registers_.set(first + i - 1, v.body[i]);
    return {};
}

DispatchInfo Executor::describeDispatch(const std::array<uint32_t, 3>& dims, uint32_t initiator, bool indirect) const {
    const bool g11 = gfx_ == Gfx::Gfx11;
    constexpr Register rsrc2 = gfx11::COMPUTE_PGM_RSRC2;  // USER_SGPR, LDS_SIZE: same bits on gfx12
    constexpr Register init = gfx11::COMPUTE_DISPATCH_INITIATOR;
    const Field fullX = g11 ? gfx11::COMPUTE_NUM_THREAD_X.field("NUM_THREAD_FULL")
                            : gfx12::COMPUTE_NUM_THREAD_X.field("NUM_THREAD_FULL");
    const Field fullZ = gfx11::COMPUTE_NUM_THREAD_Z.field("NUM_THREAD_FULL");
    const RegisterFile& r = registers_;
    DispatchInfo d;
    d.indirect = indirect;
    d.programAddress = (uint64_t{gfx11::COMPUTE_PGM_HI.field("DATA").get(r.get(gfx11::COMPUTE_PGM_HI))} << 40) |
                       (uint64_t{r.get(gfx11::COMPUTE_PGM_LO)} << 8);
    for (uint32_t i = 0; i < 16; ++i) d.userData[i] = r.get(gfx11::COMPUTE_USER_DATA_0.address + i);
    d.rsrc1 = r.get(gfx11::COMPUTE_PGM_RSRC1);
    d.rsrc2 = r.get(gfx11::COMPUTE_PGM_RSRC2);
    d.rsrc3 = r.get(gfx11::COMPUTE_PGM_RSRC3);
    d.userSgprCount = rsrc2.field("USER_SGPR").get(d.rsrc2);
    d.ldsBytes = rsrc2.field("LDS_SIZE").get(d.rsrc2) * 512;  // 128-dword granules
    d.scratchBase = ((uint64_t{r.get(gfx11::COMPUTE_DISPATCH_SCRATCH_BASE_HI)} << 32) |
                     r.get(gfx11::COMPUTE_DISPATCH_SCRATCH_BASE_LO)) << 8;
    d.tmpringSize = r.get(gfx11::COMPUTE_TMPRING_SIZE);
    d.initiator = initiator;
    d.wave32 = init.field("CS_W32_EN").get(initiator) != 0;
    d.threadDimensions = init.field("USE_THREAD_DIMENSIONS").get(initiator) != 0;
    const bool startAt0 = init.field("FORCE_START_AT_000").get(initiator) != 0;
    d.groupSize = {fullX.get(r.get(gfx11::COMPUTE_NUM_THREAD_X)), fullX.get(r.get(gfx11::COMPUTE_NUM_THREAD_Y)),
                   fullZ.get(r.get(gfx11::COMPUTE_NUM_THREAD_Z))};
    for (int i = 0; i < 3; ++i) {
        d.dim[i] = dims[i];
        d.start[i] = startAt0 ? 0 : r.get(gfx11::COMPUTE_START_X.address + i);
        const uint32_t span = dims[i] > d.start[i] ? dims[i] - d.start[i] : 0;
        // DIM_* are end positions (PAL); in thread mode they count threads, partial groups included.
        d.groups[i] = !d.threadDimensions ? span : d.groupSize[i] ? (span + d.groupSize[i] - 1) / d.groupSize[i] : 0;
    }
    d.registers = &registers_;
    return d;
}

Executor::Step Executor::stepDispatch(const PacketView& v, bool indirect) {
    std::array<uint32_t, 3> dims{};
    uint32_t initiator = 0;
    if (indirect) {
        const uint64_t address = v.get64(DI::ADDR_LO, DI::ADDR_HI);
        if (address % 4 != 0)
            return Step::fail(FaultKind::BadAddress, format("group counts at 0x%" PRIX64 " are not 4-byte aligned", address));
        if (!memory_.read(address, dims))
            return Step::fail(FaultKind::BadAddress,
                              format("cannot read the group counts at 0x%" PRIX64 ": address not mapped", address));
        initiator = v.get(DI::DISPATCH_INITIATOR);
    } else {
        dims = {v.get(DD::DIM_X), v.get(DD::DIM_Y), v.get(DD::DIM_Z)};
        initiator = v.get(DD::DISPATCH_INITIATOR);
    }
    // The CP programs these registers from the packet.
    for (uint32_t i = 0; i < 3; ++i) registers_.set(gfx11::COMPUTE_DIM_X.address + i, dims[i]);
    registers_.set(gfx11::COMPUTE_DISPATCH_INITIATOR.address, initiator);
    const DispatchInfo info = describeDispatch(dims, initiator, indirect);
    if (gfx11::COMPUTE_DISPATCH_INITIATOR.field("COMPUTE_SHADER_EN").get(initiator) == 0)
        return Step::fail(FaultKind::BadDispatch, format("COMPUTE_SHADER_EN is clear in DISPATCH_INITIATOR 0x%08X", initiator));
    static constexpr const char* kAxis[] = {"X", "Y", "Z"};
    for (int i = 0; i < 3; ++i)
        if (info.groupSize[i] == 0)
            return Step::fail(FaultKind::BadDispatch,
                              format("COMPUTE_NUM_THREAD_%s.NUM_THREAD_FULL is 0: no workgroup size was set", kAxis[i]));
    if (!dispatch_) return Step::fail(FaultKind::BadDispatch, "no DispatchHandler: this executor cannot run kernels");
    ++stats_.dispatches;
    if (info.groups[0] == 0 || info.groups[1] == 0 || info.groups[2] == 0) return {};  // no waves to launch
    if (options_.overlapDispatches) {
        HeldDispatch& h = held_.emplace_back();
        h.info = info;
        h.registers = std::make_unique<RegisterFile>(registers_);
        h.where.kind = FaultKind::DispatchFailed;
        h.where.offset = place_.offset;
        h.where.ibDepth = place_.depth;
        h.where.streamAddress = place_.streamAddress;
        h.where.packetAddress = place_.packetAddress;
        h.where.header = place_.header;
        h.where.packet = packetName(place_.header, gfx_);
        if (place_.dwords)
            h.where.packetDwords.assign(place_.dwords->begin(),
                                        place_.dwords->begin() + ptrdiff_t(std::min<size_t>(place_.dwords->size(), 32)));
        return {};
    }
    const DispatchResult result = dispatch_->dispatch(info);
    if (!result.ok) return Step::fail(FaultKind::DispatchFailed, result.error);
    return {};
}

Executor::Step Executor::stepReleaseMem(const PacketView& v) {
    // End of pipe / shader done: the write happens after every earlier dispatch has finished.
    if (Step drained = drainDispatches(); drained.fault) return drained;
    ReleaseEvent e;
    e.eventType = v.get(RM::EVENT_TYPE);
    e.eventIndex = v.get(RM::EVENT_INDEX);
    e.gcrCntl = v.get(RM::GCR_CNTL);
    e.dstSel = v.get(RM::DST_SEL);
    e.dataSel = v.get(RM::DATA_SEL);
    e.intSel = v.get(RM::INT_SEL);
    e.address = v.get64(RM::ADDRESS_LO, RM::ADDRESS_HI);
    e.intCtxId = v.get(RM::INT_CTXID);
    if (e.eventIndex != 5 && e.eventIndex != 6)
        return Step::fail(FaultKind::MalformedPacket,
                          format("EVENT_INDEX %u: RELEASE_MEM takes 5 (END_OF_PIPE) or 6 (SHADER_DONE)", e.eventIndex));
    if (e.dstSel >= 2)
        return Step::fail(FaultKind::Unsupported, "DST_SEL " + nameOf(RM::DST_SEL, e.dstSel) + " is not modelled");
    if (e.intSel > 6) return Step::fail(FaultKind::MalformedPacket, format("INT_SEL %u is undefined", e.intSel));
    const uint64_t value = v.get64(RM::DATA_LO, RM::DATA_HI);
    uint32_t words = 0;
    switch (e.dataSel) {
        case 0: break;
        case 1: e.data = value & 0xFFFFFFFFu; words = 1; break;
        case 2: e.data = value; words = 2; break;
        case 3: e.data = clock_.gpuClock(); words = 2; break;
        case 4: e.data = clock_.systemClock(); words = 2; break;
        case 5:
        case 7:
            if (gfx_ == Gfx::Gfx11)
                return Step::fail(FaultKind::Unsupported, "DATA_SEL " + nameOf(RM::DATA_SEL, e.dataSel) + " is not modelled");
            [[fallthrough]];
        default: return Step::fail(FaultKind::MalformedPacket, format("DATA_SEL %u is undefined", e.dataSel));
    }
    if (dispatch_) dispatch_->invalidate(releaseInvalidates(gfx_, e.gcrCntl, v.get(RM::GLK_INV) != 0));
    if (words > 0 && observer_) e.data = observer_->releaseData(e, e.data);
    if (words > 0) {
        if (e.address % (4 * words) != 0)
            return Step::fail(FaultKind::BadAddress,
                              format("ADDRESS 0x%" PRIX64 " is not %u-byte aligned for DATA_SEL %s", e.address,
                                     4 * words, nameOf(RM::DATA_SEL, e.dataSel).c_str()));
        const uint32_t data[2] = {static_cast<uint32_t>(e.data), static_cast<uint32_t>(e.data >> 32)};
        if (!memory_.write(e.address, std::span<const uint32_t>(data, words)))
            return Step::fail(FaultKind::BadAddress,
                              format("cannot write the %s at 0x%" PRIX64 ": address not mapped",
                                     e.dataSel >= 3 ? "timestamp" : "fence value", e.address));
        cpWrote(e.address, 4 * words);
    }
    ++stats_.releases;
    lastRelease_ = e;
    if (observer_) observer_->onRelease(e);
    return {};
}

Executor::Step Executor::stepWaitRegMem(const PacketView& v) {
    const uint32_t op = v.get(WRM::OPERATION);
    const uint32_t func = v.get(WRM::FUNCTION);
    const uint32_t space = v.get(WRM::MEM_SPACE);
    if (op == 1) return Step::fail(FaultKind::Unsupported, "OPERATION WR_WAIT_WR_REG is not modelled");
    if (op == 2) return Step::fail(FaultKind::MalformedPacket, "OPERATION 2 is undefined");
    if (func > 6) return Step::fail(FaultKind::MalformedPacket, format("FUNCTION %u is undefined", func));
    if (space > 1) return Step::fail(FaultKind::MalformedPacket, format("MEM_SPACE %u is undefined", space));
    const bool memory = space == 1;
    const uint64_t address = memory ? v.get64(WRM::POLL_ADDR_LO, WRM::POLL_ADDR_HI) : (v.get(WRM::POLL_ADDR_LO) & 0x3FFFF);
    if (memory && address % 4 != 0)
        return Step::fail(FaultKind::BadAddress, format("POLL_ADDR 0x%" PRIX64 " is not 4-byte aligned", address));
    if (!memory && !RegisterFile::contains(static_cast<uint32_t>(address)))
        return Step::fail(FaultKind::Unsupported,
                          format("polling register 0x%" PRIX64 ": only SH registers are modelled", address));
    // The CP stalls here; what is in flight finishes meanwhile (and may be what it waits for).
    if (Step drained = drainDispatches(); drained.fault) return drained;
    const uint32_t mask = v.get(WRM::MASK);
    const uint32_t reference = v.get(WRM::REFERENCE);
    const auto compare = static_cast<CompareFunc>(func);
    ++stats_.waits;
    const std::string target = memory ? format("memory 0x%" PRIX64, address) : format("register 0x%04" PRIX64, address);
    auto state = [&](uint32_t value, uint64_t polls) {
        return format("%s = 0x%08X; waiting for (value & 0x%08X) %s 0x%08X; %" PRIu64 " polls", target.c_str(), value,
                      mask, nameOf(WRM::FUNCTION, func).c_str(), reference, polls);
    };
    uint64_t polls = 0;
    uint32_t last = 0;
    uint64_t since = clock_.nowNs();
    for (;;) {
        uint32_t value = 0;
        if (memory ? !memory_.read(address, {&value, 1}) : false)
            return Step::fail(FaultKind::BadAddress, format("cannot read POLL_ADDR 0x%" PRIX64 ": address not mapped", address));
        if (!memory) value = registers_.get(static_cast<uint32_t>(address));
        ++polls;
        ++stats_.polls;
        if (compareHolds(compare, value, mask, reference)) return {};
        if (stopRequested()) return Step::fail(FaultKind::Stopped, "WAIT_REG_MEM stopped: " + state(value, polls));
        const uint64_t now = clock_.nowNs();
        if (polls > 1 && value != last) since = now;  // progress resets the timer
        last = value;
        if (options_.waitTimeoutNs && now - since >= options_.waitTimeoutNs)
            return Step::fail(FaultKind::WaitTimeout,
                              format("WAIT_REG_MEM gave up after %" PRIu64 " ms without the compare passing: ",
                                     options_.waitTimeoutNs / 1000000) + state(value, polls));
        clock_.idle();
    }
}

Executor::Step Executor::stepWriteData(const PacketView& v) {
    const uint32_t dst = v.get(WD::DST_SEL);
    const bool increment = v.get(WD::ADDR_INCR) == 0;
    const std::span<const uint32_t> data = v.body.subspan(3);
    if (dst == 2 || dst == 5) {
        const uint64_t address = v.get64(WD::DST_ADDR_LO, WD::DST_ADDR_HI);
        if (address % 4 != 0)
            return Step::fail(FaultKind::BadAddress, format("DST_ADDR 0x%" PRIX64 " is not 4-byte aligned", address));
        bool ok = true;
        if (increment) {
            ok = memory_.write(address, data);
        } else {
            for (size_t i = 0; i < data.size() && ok; ++i) ok = memory_.write(address, data.subspan(i, 1));
        }
        if (!ok)
            return Step::fail(FaultKind::BadAddress,
                              format("cannot write %zu dwords at 0x%" PRIX64 ": address not mapped", data.size(), address));
        cpWrote(address, increment ? 4 * data.size() : 4);
        return {};
    }
    if (dst == 0) {
        const uint32_t reg = v.get(WD::DST_ADDR_LO);
        const uint32_t last = increment ? reg + static_cast<uint32_t>(data.size()) - 1 : reg;
        if (!RegisterFile::contains(reg) || !RegisterFile::contains(last))
            return Step::fail(FaultKind::Unsupported,
                              format("writing register 0x%X: only SH registers are modelled", reg));
        for (size_t i = 0; i < data.size(); ++i) registers_.set(increment ? reg + static_cast<uint32_t>(i) : reg, data[i]);
        return {};
    }
    const Field& dstSel = gfx_ == Gfx::Gfx11 ? gfx11::WRITE_DATA::DST_SEL : gfx12::WRITE_DATA::DST_SEL;
    if (!dstSel.nameOf(dst).empty())
        return Step::fail(FaultKind::Unsupported, "DST_SEL " + nameOf(dstSel, dst) + " is not modelled");
    return Step::fail(FaultKind::MalformedPacket, format("DST_SEL %u is undefined", dst));
}

Executor::Step Executor::stepCopyData(const PacketView& v) {
    const uint32_t srcSel = v.get(CD::SRC_SEL);
    const uint32_t dstSel = v.get(CD::DST_SEL);
    const uint32_t words = v.get(CD::COUNT_SEL) ? 2 : 1;
    const uint64_t src = v.get64(CD::SRC_ADDR_LO, CD::SRC_ADDR_HI);
    const uint64_t dst = v.get64(CD::DST_ADDR_LO, CD::DST_ADDR_HI);
    const Field& srcField = gfx_ == Gfx::Gfx11 ? gfx11::COPY_DATA::SRC_SEL : gfx12::COPY_DATA::SRC_SEL;
    const Field& dstField = gfx_ == Gfx::Gfx11 ? gfx11::COPY_DATA::DST_SEL : gfx12::COPY_DATA::DST_SEL;
    uint32_t value[2] = {0, 0};
    switch (srcSel) {
        case 0: {
            const uint32_t reg = v.get(CD::SRC_ADDR_LO);
            if (!RegisterFile::contains(reg) || !RegisterFile::contains(reg + words - 1))
                return Step::fail(FaultKind::Unsupported, format("reading register 0x%X: only SH registers are modelled", reg));
            for (uint32_t i = 0; i < words; ++i) value[i] = registers_.get(reg + i);
            break;
        }
        case 1:
        case 2:
            if (src % (4 * words) != 0)
                return Step::fail(FaultKind::BadAddress, format("SRC_ADDR 0x%" PRIX64 " is not %u-byte aligned", src, 4 * words));
            if (!memory_.read(src, std::span<uint32_t>(value, words)))
                return Step::fail(FaultKind::BadAddress, format("cannot read SRC_ADDR 0x%" PRIX64 ": address not mapped", src));
            break;
        case 5: value[0] = v.get(CD::SRC_ADDR_LO); value[1] = v.get(CD::SRC_ADDR_HI); break;
        case 9:
        case 10: {
            const uint64_t t = srcSel == 9 ? clock_.gpuClock() : clock_.systemClock();
            value[0] = static_cast<uint32_t>(t);
            value[1] = static_cast<uint32_t>(t >> 32);
            break;
        }
        default:
            if (!srcField.nameOf(srcSel).empty())
                return Step::fail(FaultKind::Unsupported, "SRC_SEL " + nameOf(srcField, srcSel) + " is not modelled");
            return Step::fail(FaultKind::MalformedPacket, format("SRC_SEL %u is undefined", srcSel));
    }
    switch (dstSel) {
        case 0: {
            const uint32_t reg = v.get(CD::DST_ADDR_LO);
            if (!RegisterFile::contains(reg) || !RegisterFile::contains(reg + words - 1))
                return Step::fail(FaultKind::Unsupported, format("writing register 0x%X: only SH registers are modelled", reg));
            for (uint32_t i = 0; i < words; ++i) registers_.set(reg + i, value[i]);
            return {};
        }
        case 2:
        case 5:
            if (dst % (4 * words) != 0)
                return Step::fail(FaultKind::BadAddress, format("DST_ADDR 0x%" PRIX64 " is not %u-byte aligned", dst, 4 * words));
            if (!memory_.write(dst, std::span<const uint32_t>(value, words)))
                return Step::fail(FaultKind::BadAddress, format("cannot write DST_ADDR 0x%" PRIX64 ": address not mapped", dst));
            cpWrote(dst, 4 * words);
            return {};
        default:
            if (!dstField.nameOf(dstSel).empty())
                return Step::fail(FaultKind::Unsupported, "DST_SEL " + nameOf(dstField, dstSel) + " is not modelled");
            return Step::fail(FaultKind::MalformedPacket, format("DST_SEL %u is undefined", dstSel));
    }
}

// The CP's DMA runs in order here, so it has landed before the next packet (RAW_WAIT and write
// confirm hold trivially). Dword granularity only: what the staging copies and fills need.
Executor::Step Executor::stepDmaData(const PacketView& v) {
    const uint32_t srcSel = v.get(DMA::SRC_SEL), dstSel = v.get(DMA::DST_SEL);
    const uint64_t src = v.get64(DMA::SRC_ADDR_LO_OR_DATA, DMA::SRC_ADDR_HI);
    const uint64_t dst = v.get64(DMA::DST_ADDR_LO, DMA::DST_ADDR_HI);
    const uint32_t bytes = v.get(DMA::BYTE_COUNT);
    const bool fill = srcSel == 2;
    if (srcSel == 1 || dstSel == 1) return Step::fail(FaultKind::Unsupported, "DMA_DATA to or from GDS is not modelled");
    if (v.get(DMA::SAIC) || v.get(DMA::DAIC)) return Step::fail(FaultKind::Unsupported, "DMA_DATA without address increment (SAIC/DAIC) is not modelled");
    if (bytes % 4 != 0 || dst % 4 != 0 || (!fill && src % 4 != 0))
        return Step::fail(FaultKind::Unsupported,
                          format("DMA_DATA of %u bytes from 0x%" PRIX64 " to 0x%" PRIX64 ": only whole, aligned dwords are modelled", bytes, src, dst));
    std::vector<uint32_t>& chunk = dmaScratch_;
    for (uint32_t done = 0; done < bytes;) {
        const uint32_t n = std::min<uint32_t>(bytes - done, 1u << 20);
        chunk.resize(n / 4);
        if (fill)
            std::fill(chunk.begin(), chunk.end(), v.get(DMA::SRC_ADDR_LO_OR_DATA));
        else if (!memory_.read(src + done, chunk))
            return Step::fail(FaultKind::BadAddress, format("DMA_DATA cannot read 0x%X bytes at SRC_ADDR 0x%" PRIX64 ": address not mapped", n, src + done));
        if (dstSel != 2 && !memory_.write(dst + done, chunk))
            return Step::fail(FaultKind::BadAddress, format("DMA_DATA cannot write 0x%X bytes at DST_ADDR 0x%" PRIX64 ": address not mapped", n, dst + done));
        done += n;
    }
    if (dstSel != 2) cpWrote(dst, bytes);  // the CU caches may hold what was there before
    return {};
}

Executor::Step Executor::stepIndirectBuffer(const PacketView& v, uint32_t depth) {
    const uint64_t address = v.get64(IB::IB_BASE_LO, IB::IB_BASE_HI);
    const uint32_t size = v.get(IB::IB_SIZE);
    if (v.get(IB::VALID) == 0)
        return Step::fail(FaultKind::MalformedPacket, "VALID (bit 23) is clear: a compute queue's IB needs it (PAL, Linux)");
    if (address % 4 != 0)
        return Step::fail(FaultKind::BadAddress, format("IB_BASE 0x%" PRIX64 " is not 4-byte aligned", address));
    ++stats_.indirectBuffers;
    Source ib;
    ib.kind = Source::Kind::Memory;
    ib.base = address;
    ib.end = size;
    Step step;
    // CHAIN replaces the current IB (no return, no deeper nesting). At the top level there is no
    // IB to replace, so a chained IB there is an ordinary call.
    if (v.get(IB::CHAIN) && depth > 0) {
        step.chain = ib;
        return step;
    }
    if (depth + 1 > options_.maxIbDepth)
        return Step::fail(FaultKind::IbTooDeep,
                          format("an IB at depth %u calls another; this CP allows %u levels", depth, options_.maxIbDepth));
    ExecResult r = run(ib, depth + 1);
    if (r.fault) {
        step.fault = std::move(r.fault);
        step.located = true;
    }
    return step;
}

// The CP reads the word through the L2 (after the CS_PARTIAL_FLUSH that ended the writing
// dispatch, its stores are there); a 0 skips EXEC_COUNT dwords of this stream.
Executor::Step Executor::stepCondExec(const PacketView& v) {
    namespace CE = gfx11::COND_EXEC;
    const uint64_t address = v.get64(CE::ADDR_LO, CE::ADDR_HI);
    if (address % 4 != 0) return Step::fail(FaultKind::BadAddress, format("COND_EXEC address 0x%" PRIX64 " is not 4-byte aligned", address));
    uint32_t word = 0;
    if (!memory_.read(address, {&word, 1}))
        return Step::fail(FaultKind::BadAddress, format("COND_EXEC cannot read 0x%" PRIX64 ": address not mapped", address));
    ++stats_.condExecs;
    Step step;
    if (word == 0) {
        step.skipDwords = v.get(CE::EXEC_COUNT);
        ++stats_.condExecSkips;
    }
    return step;
}

Executor::Step Executor::stepEventWrite(const PacketView& v) {
    const uint32_t type = v.get(EW::EVENT_TYPE);
    const uint32_t index = v.get(EW::EVENT_INDEX);
    const bool sample = v.body.size() == 3;
    if (index != 0 && index != 2 && index != 4)
        return Step::fail(FaultKind::MalformedPacket,
                          format("EVENT_INDEX %u is not allowed on a compute queue (PAL: 0, 2 or 4)", index));
    if (sample != (index == 2))
        return Step::fail(FaultKind::MalformedPacket, sample ? "an address is given but EVENT_INDEX is not SAMPLE_PIPELINESTAT"
                                                             : "SAMPLE_PIPELINESTAT needs the 4-dword form with an address");
    if (sample) return Step::fail(FaultKind::Unsupported, "SAMPLE_PIPELINESTAT counters are not modelled");
    // CS_PARTIAL_FLUSH: the CP waits until every dispatch before it has finished.
    if (type == gfx11::CS_PARTIAL_FLUSH)
        if (Step drained = drainDispatches(); drained.fault) return drained;
    if (observer_) observer_->onEventWrite(type, index);
    return {};
}

}  // namespace zinc::pm4
