#include "kfd/tier/plan_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "kernels/code_object.h"
#include "kernels/embedded.h"
#include "kfd/device/dispatch_packets.h"
#include "kfd/device/packet_names.h"
#include "runtime/tier.h"

namespace zinc::kfd {

using runtime::TierError;

namespace {
constexpr uint64_t kKernargSlot = 256;     // bytes per dispatch; every kernarg struct is < 128
constexpr uint32_t kBarrierDwords = 2 + 8;  // EVENT_WRITE + ACQUIRE_MEM
}  // namespace

KernelTable::KernelTable(Device& device)
    : device_(device), gfx_(device.caps().gfxMajor >= 12 ? pm4::Gfx::Gfx12 : pm4::Gfx::Gfx11) {
    const std::string& target = device.caps().gfxName;
    const auto bytes = kernels::embeddedCodeObject(target);
    if (bytes.empty())
        throw TierError(fmt::format("kfd tier: no code object is built for {} (built: gfx1100, gfx1201)", target));
    std::shared_ptr<const kernels::CodeObject> object;
    try {
        object = std::make_shared<kernels::CodeObject>(kernels::CodeObject::parse(bytes, "embedded " + target));
    } catch (const std::exception& e) {
        throw TierError(fmt::format("kfd tier: embedded code object for {}: {}", target, e.what()));
    }
    Result<LoadedCodeObject> loaded = device.loadCodeObject(object);
    if (!loaded) throw TierError(fmt::format("kfd tier: loading the {} kernels on {}: {}", target, device.name(), loaded.error().describe()));
    loaded_ = std::move(*loaded);
}

KernelTable::~KernelTable() { (void)device_.unloadCodeObject(loaded_); }

const LoadedKernel& KernelTable::get(std::string_view name) {
    if (auto it = kernels_.find(name); it != kernels_.end()) return it->second;
    Result<LoadedKernel> k = loaded_.kernel(name);
    if (!k) throw TierError(fmt::format("kfd tier: kernel {}: {}", name, k.error().describe()));
    return kernels_.emplace(std::string(name), *k).first->second;
}

PlanBuilder::PlanBuilder(Device& device, KernelTable& kernels, uint32_t maxDispatches)
    : device_(device),
      kernels_(kernels),
      maxDispatches_(maxDispatches),
      kernargs_(device, uint64_t(maxDispatches) * kKernargSlot, MemoryKind::Vram, "kernarg arena"),
      storage_(size_t(maxDispatches) * (kLaunchDwords + kBarrierDwords) + 64),
      stream_(storage_, kernels.gfx()) {
    // The token state was written by the host or by the CP (WRITE_DATA) just before this IB.
    stream_.acquireMem({.gcrCntl = kAcquireAtPlanStart});
}

void PlanBuilder::barrier() {
    stream_.eventWrite(pm4::gfx11::CS_PARTIAL_FLUSH, 4);
    stream_.acquireMem({.gcrCntl = kAcquireBetweenDispatches});
    written_.clear();
    read_.clear();
    ++barriers_;
}

void PlanBuilder::launchBytes(std::string_view kernel, std::span<const uint8_t> args, std::array<uint32_t, 3> groups,
                              std::initializer_list<BufferId> reads, std::initializer_list<BufferId> writes,
                              std::string_view label) {
    const LoadedKernel& k = kernels_.get(kernel);
    if (dispatches_ >= maxDispatches_)
        throw TierError(fmt::format("kfd tier: op {} ({}): more than {} dispatches in one plan", label, kernel, maxDispatches_));
    // sizeof(Args) counts the struct's tail padding; the segment ends at its last field.
    if (args.size() > (k.info->kernargSegmentSize + 7) / 8 * 8 || k.info->kernargSegmentSize > kKernargSlot)
        throw TierError(fmt::format("kfd tier: op {}: {} bytes of arguments for kernel {} whose kernarg segment is {} bytes",
                                    label, args.size(), kernel, k.info->kernargSegmentSize));
    ops_.emplace_back(stream_.size(), std::string(label));
    bool needsBarrier = false;
    for (BufferId r : reads) needsBarrier |= r != graph::kNoBuffer && written_.count(r) > 0;
    for (BufferId w : writes) needsBarrier |= w != graph::kNoBuffer && (written_.count(w) > 0 || read_.count(w) > 0);
    if (needsBarrier) barrier();
    for (BufferId r : reads)
        if (r != graph::kNoBuffer) read_.insert(r);
    for (BufferId w : writes)
        if (w != graph::kNoBuffer) written_.insert(w);

    const uint64_t offset = kernargUsed_;
    std::memset(kernargs_.cpu<uint8_t>(offset), 0, kKernargSlot);
    std::memcpy(kernargs_.cpu<uint8_t>(offset), args.data(), std::min<size_t>(args.size(), k.info->kernargSegmentSize));
    kernargUsed_ += kKernargSlot;
    for (uint32_t g : groups)
        if (g == 0) throw TierError(fmt::format("kfd tier: op {}: kernel {} launched over an empty grid", label, kernel));
    if (Status s = emitLaunch(stream_, k, {.kernargAddress = kernargs_.gpu(offset), .groups = groups}); !s)
        throw TierError(fmt::format("kfd tier: op {}: {}", label, s.error().describe()));
    ++dispatches_;
}

PlanBuilder::Finished PlanBuilder::finish(const std::string& what) {
    // Everything finished before the packets after this IB run (the next token's WRITE_DATA of
    // the token state, the COPY_DATA of the sampled id).
    stream_.eventWrite(pm4::gfx11::CS_PARTIAL_FLUSH, 4);
    Finished f;
    f.ibDwords = stream_.size();
    f.hostCopy.assign(stream_.dwords().begin(), stream_.dwords().end());
    f.ib = DeviceMemory(device_, uint64_t(f.ibDwords) * 4, MemoryKind::Gtt, what + " indirect buffer");
    std::memcpy(f.ib.cpu<uint32_t>(), f.hostCopy.data(), f.hostCopy.size() * 4);
    f.kernargs = std::move(kernargs_);
    f.dispatches = dispatches_;
    f.barriers = barriers_;
    f.ops = std::move(ops_);
    return f;
}

std::string PlanBuilder::Finished::describeCpPosition(const QueueState& state) const {
    if (!state.insideIb || !ib) return "";
    const uint64_t address = state.insideIb->packetAddress, base = ib.gpu();
    if (address < base || address >= base + uint64_t(ibDwords) * 4) return "";
    const auto dword = uint32_t((address - base) / 4);
    // The last dispatch whose packets begin at or before that dword.
    auto op = std::upper_bound(ops.begin(), ops.end(), dword, [](uint32_t d, const auto& o) { return d < o.first; });
    std::string where = fmt::format("; the CP is at IB dword {} ({})", dword, packetShape(hostCopy[dword]).name);
    if (op == ops.begin()) return where + ", before the first dispatch";
    return where + fmt::format(" in op '{}' (dispatch {} of {})", std::prev(op)->second, std::prev(op) - ops.begin() + 1, ops.size());
}

uint64_t PlanBuilder::Finished::kernargAddress(size_t dispatch) const { return kernargs.gpu(uint64_t(dispatch) * kKernargSlot); }

}  // namespace zinc::kfd
