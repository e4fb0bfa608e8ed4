#include "kfd/sim/isa/launch.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <span>

namespace zinc::kfd::isa {
namespace {

[[noreturn]] void refuse(const kernels::KernelInfo& k, const std::string& why) { throw IsaError("kernel " + k.name + ": " + why); }

void check(const LaunchRequest& r) {
    const kernels::KernelInfo& k = *r.kernel;
    const kernels::KernelDescriptor& kd = k.descriptor;
    if (!kd.wave32())
        refuse(k, "its kernel descriptor asks for wave64 (KERNEL_CODE_PROPERTIES.ENABLE_WAVEFRONT_SIZE32 = 0); the simulated GPU runs wave32 code only");
    if (r.ldsBytes > kMaxLdsBytes)
        refuse(k, "COMPUTE_PGM_RSRC2.LDS_SIZE asks for " + std::to_string(r.ldsBytes) + " bytes of LDS, over the " +
                      std::to_string(kMaxLdsBytes) + " bytes a workgroup can have");
    if (k.groupSegmentFixedSize > kMaxLdsBytes)
        refuse(k, "it uses " + std::to_string(k.groupSegmentFixedSize) + " bytes of LDS (group_segment_fixed_size), over the " +
                      std::to_string(kMaxLdsBytes) + " bytes a workgroup can have");
    // RSRC1.VGPRS: granules of 8 VGPRs in wave32 (LLVM AMDGPUUsage, GRANULATED_WORKITEM_VGPR_COUNT).
    const uint32_t vgprs = ((kd.computePgmRsrc1 & 0x3fu) + 1) * 8;
    if (vgprs > 256) refuse(k, "COMPUTE_PGM_RSRC1.VGPRS asks for " + std::to_string(vgprs) + " VGPRs, over the 256 a wave32 can have");
    if ((kd.scratchEnabled() || k.privateSegmentFixedSize > 0) && r.scratchBase == 0)
        refuse(k, "it needs scratch (COMPUTE_PGM_RSRC2.SCRATCH_EN = " + std::to_string(kd.scratchEnabled() ? 1 : 0) + ", " +
                      std::to_string(k.privateSegmentFixedSize) + " bytes per work-item) but COMPUTE_DISPATCH_SCRATCH_BASE is 0");
    const uint64_t threads = uint64_t(r.groupSize[0]) * r.groupSize[1] * r.groupSize[2];
    if (threads == 0 || threads > 1024)
        refuse(k, "COMPUTE_NUM_THREAD_X/Y/Z give " + std::to_string(threads) + " work-items per workgroup (1 to 1024 allowed)");
    if (r.userSgprCount > 16) refuse(k, "COMPUTE_PGM_RSRC2.USER_SGPR is " + std::to_string(r.userSgprCount) + " (at most 16)");
}

// A permutation of [0, n) from `seed` (Fisher-Yates over a xorshift stream).
std::vector<uint32_t> scrambled(uint32_t n, uint64_t seed) {
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (uint32_t i = n; i > 1; --i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::swap(order[i - 1], order[uint32_t(x % i)]);
    }
    return order;
}

}  // namespace

void launch(const LaunchRequest& r, LaunchCounts* counts) {
    check(r);
    const auto started = std::chrono::steady_clock::now();
    const kernels::KernelInfo& k = *r.kernel;
    const kernels::KernelDescriptor& kd = k.descriptor;
    const Program& program = *r.program;
    const int32_t entry = program.at(k.entryAddress);
    if (entry < 0) refuse(k, "its entry is no instruction of the decoded code");
    const bool gfx12 = program.target.rfind("gfx12", 0) == 0;

    const uint32_t threads = r.groupSize[0] * r.groupSize[1] * r.groupSize[2];
    const uint32_t nWaves = (threads + 31) / 32;
    // The waves and the LDS of this thread's last launch, reused: a 32 KiB VGPR file per wave
    // per dispatch from the heap was most of what remained of ASan's allocator in kfd_tier (perf).
    // Each launch starts them as a fresh allocation would: VGPRs zero.
    thread_local std::vector<std::unique_ptr<Wave>> wavePool;
    thread_local std::vector<uint8_t> lds;
    while (wavePool.size() < nWaves) wavePool.push_back(std::make_unique<Wave>());
    const std::span<std::unique_ptr<Wave>> waves(wavePool.data(), nWaves);
    for (auto& w : waves) {
        std::fill(w->vgpr.begin(), w->vgpr.end(), 0u);
        w->regionLo = 1;  // the memory map may have changed since
        w->regionHi = 0;
        w->bytesRead = w->bytesWritten = 0;
    }
    lds.resize(std::max<uint32_t>(r.ldsBytes, 4));
    std::vector<uint64_t> executed(program.opcodes.size(), 0);
    uint64_t bytesRead = 0, bytesWritten = 0, waveCount = 0;

    const uint32_t nGroups = r.groups[0] * r.groups[1] * r.groups[2];
    for (const uint32_t g : scrambled(nGroups, r.seed)) {
        const uint32_t gx = g % r.groups[0], gy = (g / r.groups[0]) % r.groups[1], gz = g / (r.groups[0] * r.groups[1]);
        std::fill(lds.begin(), lds.end(), uint8_t(0xad));  // LDS is not initialised between workgroups
        for (uint32_t wi = 0; wi < nWaves; ++wi) {
            Wave& w = *waves[wi];
            std::fill(std::begin(w.s), std::end(w.s), 0u);
            w.clearPending();
            w.program = &program;
            w.loadBase = r.loadBase;
            w.lds = lds.data();
            w.ldsBytes = r.ldsBytes;
            w.memory = r.memory;
            w.stale = r.stale;
            w.written = r.written;
            w.executed = executed.data();
            w.pc = uint32_t(entry);
            w.current = uint32_t(entry);
            w.state = Wave::State::Running;
            w.scc = false;
            // User SGPRs, then the system SGPRs the descriptor enables, in AMDGPUUsage order.
            uint32_t s = 0;
            for (; s < r.userSgprCount; ++s) w.s[s] = r.userData[s];
            const uint32_t ids[3] = {gx, gy, gz};
            if (gfx12) {
                // gfx12 keeps workgroup ids in trap temporaries: ttmp9 = x, ttmp7 = y | z << 16.
                w.s[kTtmp0 + 9] = gx;
                w.s[kTtmp0 + 7] = (gy & 0xffffu) | (gz << 16);
            } else {
                for (int d = 0; d < 3; ++d)
                    if (kd.workgroupIdEnabled(d)) w.s[s++] = ids[d];
            }
            uint32_t exec = 0;
            for (uint32_t lane = 0; lane < 32; ++lane) {
                const uint32_t t = wi * 32 + lane;
                if (t >= threads) break;
                exec |= 1u << lane;
                const uint32_t x = t % r.groupSize[0], y = (t / r.groupSize[0]) % r.groupSize[1], z = t / (r.groupSize[0] * r.groupSize[1]);
                w.v(0, lane) = x | y << 10 | z << 20;  // packed work-item ids (gfx11/gfx12)
            }
            w.s[kExecLo] = exec;
        }
        // Between two barriers each wave runs alone until it reaches the barrier or ends, the waves
        // in ascending order, then descending after the next barrier: a wave that reads what
        // another writes without a barrier between them reads it too early in one of the two.
        bool descending = false;
        for (;;) {
            bool anyBarrier = false;
            for (uint32_t n = 0; n < nWaves; ++n) {
                const uint32_t wi = descending ? nWaves - 1 - n : n;
                Wave& w = *waves[wi];
                if (w.state == Wave::State::Running) {
                    try {
                        const Inst* insts = program.insts.data();
                        const uint32_t size = uint32_t(program.insts.size());
                        while (w.state == Wave::State::Running) {
                            if (w.pc >= size) w.fail("ran past the end of the code");
                            const Inst& inst = insts[w.pc];
                            w.current = w.pc++;
                            ++executed[inst.opcode];
                            inst.run(w, inst);
                        }
                    } catch (const IsaError& e) {
                        refuse(k, "workgroup (" + std::to_string(gx) + "," + std::to_string(gy) + "," + std::to_string(gz) + ") wave " +
                                      std::to_string(wi) + " " + e.what());
                    }
                }
                anyBarrier |= w.state == Wave::State::Barrier;
            }
            if (!anyBarrier) break;
            for (auto& w : waves)
                if (w->state == Wave::State::Barrier) w->state = Wave::State::Running;
            descending = !descending;
        }
        for (auto& w : waves) {
            bytesRead += w->bytesRead;
            bytesWritten += w->bytesWritten;
            w->bytesRead = w->bytesWritten = 0;
        }
        waveCount += nWaves;
    }
    if (Profile* profile = currentProfile()) {
        KernelProfile p;
        p.dispatches = 1;
        p.waves = waveCount;
        p.bytesRead = bytesRead;
        p.bytesWritten = bytesWritten;
        for (size_t i = 0; i < executed.size(); ++i) p.instructions[size_t(program.opClass[i])] += executed[i];
        p.hostSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        profile->add(k.name, p);
    }
    if (counts) {
        if (counts->executed.size() < executed.size()) counts->executed.resize(executed.size(), 0);
        for (size_t i = 0; i < executed.size(); ++i) counts->executed[i] += executed[i];
        counts->waves += waveCount;
        counts->bytesRead += bytesRead;
        counts->bytesWritten += bytesWritten;
    }
}

}  // namespace zinc::kfd::isa
