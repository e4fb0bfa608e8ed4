#pragma once
// Writes one plan: an indirect buffer of PM4 packets (per dispatch the SET_SH_REGs and
// DISPATCH_DIRECT of kfd::emitLaunch, the barriers between dependent dispatches) and the
// kernarg arena its dispatches point at, both written once. Barriers are placed from what each
// dispatch reads and writes: a dispatch that reads or overwrites something an earlier one wrote
// since the last barrier gets CS_PARTIAL_FLUSH (wait for those dispatches to finish) and an
// ACQUIRE_MEM that invalidates the per-CU caches (GL0/GL1, scalar cache) so it sees the
// writes (tinygrad emits the flush after every dispatch; FACTS.md §2.10; RADV does the same
// flush + invalidate for a compute-to-compute barrier).
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kfd/device/device.h"
#include "kfd/tier/tier_memory.h"
#include "pm4/stream.h"

namespace zinc::kfd {

// The embedded code object of the device's target, loaded once; kernels by name.
class KernelTable {
public:
    KernelTable(Device& device);  // throws TierError naming the target
    ~KernelTable();
    KernelTable(const KernelTable&) = delete;
    KernelTable& operator=(const KernelTable&) = delete;
    const LoadedKernel& get(std::string_view name);
    pm4::Gfx gfx() const { return gfx_; }

private:
    Device& device_;
    pm4::Gfx gfx_;
    LoadedCodeObject loaded_;
    std::map<std::string, LoadedKernel, std::less<>> kernels_;
};

// GCR_CNTL values (pm4/packets.h field tables). Between dispatches: invalidate GL0 (GLV),
// GL1 and the scalar cache (GLK). At the start of a plan also GLM and GL2, since the host and
// the CP wrote the token state.
inline constexpr uint32_t kAcquireBetweenDispatches = (1u << 7) | (1u << 8) | (1u << 9);
inline constexpr uint32_t kAcquireAtPlanStart = kAcquireBetweenDispatches | (1u << 5) | (1u << 14);
// RELEASE_MEM GCR for a fence the host reads: write back and invalidate GLM/GL2, invalidate
// GLV/GL1 (tinygrad's gfx11 cache-flush release, 0x70F, FACTS.md §2.3).
inline constexpr uint32_t kReleaseFlush = 0x70F;

// What a dispatch touches, for barrier placement: buffer ids of the lowered graph
// (graph/lower.h: the graph's buffers and its scratch buffers, the KV cache included).
using graph::BufferId;

class PlanBuilder {
public:
    // `maxDispatches` bounds the kernarg arena and the stream.
    PlanBuilder(Device& device, KernelTable& kernels, uint32_t maxDispatches);

    // One dispatch of `kernel` with `args` (a kernels/kernel_args.h struct) over `groups`, after a
    // barrier where it reads or writes a buffer an earlier dispatch wrote, or writes one an
    // earlier dispatch read (graph::kNoBuffer entries are roles the dispatch does not have).
    template <class Args>
    void launch(std::string_view kernel, const Args& args, std::array<uint32_t, 3> groups,
                std::initializer_list<BufferId> reads, std::initializer_list<BufferId> writes, std::string_view label) {
        launchBytes(kernel, {reinterpret_cast<const uint8_t*>(&args), sizeof args}, groups, reads, writes, label);
    }
    void launchBytes(std::string_view kernel, std::span<const uint8_t> args, std::array<uint32_t, 3> groups,
                     std::initializer_list<BufferId> reads, std::initializer_list<BufferId> writes, std::string_view label);
    // A barrier now, whatever the dependencies (end of plan).
    void barrier();
    pm4::Stream& stream() { return stream_; }

    struct Finished {
        DeviceMemory ib;
        uint32_t ibDwords = 0;
        DeviceMemory kernargs;
        uint32_t dispatches = 0;
        uint32_t barriers = 0;
        std::vector<uint32_t> hostCopy;  // the IB as written (for --dump-pm4)
        // Per dispatch: the IB dword where its packets (barrier included) begin, and its op.
        std::vector<std::pair<uint32_t, std::string>> ops;

        // Where in this plan the CP of `state` is, as "; the CP is at IB dword N (PACKET) in op
        // 'LABEL' (dispatch i of n)", or "" when it is not inside this IB.
        std::string describeCpPosition(const QueueState& state) const;
        // Where dispatch `i`'s kernarg segment is (tests aim an injected page fault at it).
        uint64_t kernargAddress(size_t dispatch) const;
    };
    // Copies the IB into GPU memory. The kernarg arena was written as dispatches were added.
    Finished finish(const std::string& what);

private:
    Device& device_;
    KernelTable& kernels_;
    uint32_t maxDispatches_;
    DeviceMemory kernargs_;
    uint64_t kernargUsed_ = 0;
    std::vector<uint32_t> storage_;
    pm4::Stream stream_;
    std::set<BufferId> written_, read_;  // since the last barrier
    std::vector<std::pair<uint32_t, std::string>> ops_;
    uint32_t dispatches_ = 0, barriers_ = 0;
};

}  // namespace zinc::kfd
