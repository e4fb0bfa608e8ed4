#include "vulkan/weight_store.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <unordered_set>

#include "runtime/host_pages.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

constexpr size_t kAlign = 256;
constexpr size_t kChunkLimit = size_t{1} << 30;
constexpr size_t kStagingBytes = size_t{64} << 20;
constexpr auto kUploadTimeout = std::chrono::seconds(120);

// Shaders read 2-byte aligned blocks as whole aligned words (rd32x8): up to 4 bytes past a
// tensor's end, so every tensor keeps a few bytes of slack after it.
size_t alignUp(size_t n) { return (n + 16 + kAlign - 1) / kAlign * kAlign; }

// The distinct tensors the graph reads (tied embeddings share their data).
std::vector<const model::WeightRef*> tensorsOf(const graph::Graph& graph) {
    std::vector<const model::WeightRef*> out;
    std::unordered_set<const uint8_t*> seen;
    for (const auto& op : graph.ops)
        for (const model::WeightRef* w : op.weights())
            if (w && w->present() && seen.insert(w->data).second) out.push_back(w);
    return out;
}

size_t tensorBytes(const model::WeightRef& w) {
    return static_cast<size_t>(w.rowBytes) * static_cast<size_t>(w.rows) * static_cast<size_t>(w.stack);
}

// Copies host bytes into device buffers through a ring of staging buffers: a slot is filled by
// several threads at once (reading the mapped file is page faults and memcpy, which one thread
// does at ~3.6 GiB/s), then its copies are submitted while the next slot fills. The file's pages
// are given back once copied.
class Uploader {
public:
    Uploader(const Device& device, Queue& queue, uint64_t totalBytes) : queue_(queue), total_(totalBytes) {
        for (auto& s : slots_) {
            s.staging = DeviceBuffer(device, kStagingBytes, MemoryKind::HostVisible, "weight staging");
            s.cmd = queue.allocate();
        }
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        threads_ = static_cast<int>(std::clamp(cores / 2, 1u, 8u));
        showProgress_ = ::isatty(STDERR_FILENO) == 1;
    }
    ~Uploader() {
        queue_.drain(std::chrono::seconds(10), "weight upload");  // a wait that timed out: its copies still run
        for (auto& s : slots_) queue_.free(s.cmd);
    }
    void copy(const uint8_t* src, size_t bytes, const DeviceBuffer& dst, size_t dstOffset) {
        const uint8_t* const begin = src;
        const size_t total = bytes;
        while (bytes > 0) {
            Slot& s = slots_[current_];
            const size_t n = std::min(bytes, kStagingBytes - s.used);
            s.fills.push_back({src, s.used, n});
            s.regions.push_back({s.used, dstOffset, n});
            s.targets.push_back(dst.handle());
            s.used += n;
            src += n;
            dstOffset += n;
            bytes -= n;
            if (s.used == kStagingBytes) flush();
        }
        slots_[current_].giveBack.push_back({begin, total});  // after the slot holding its last byte is filled
    }
    // Returns the seconds from construction to the last copy's completion.
    double finish() {
        flush();
        for (auto& s : slots_)
            if (s.pending) queue_.wait(s.pending, kUploadTimeout, "weight upload");
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        if (printed_) std::fprintf(stderr, "\rzinc-rt: weights %.1f GiB uploaded in %.1f s (%.1f GiB/s)%20s\n",
                                   gib(total_), seconds, gib(total_) / seconds, "");
        return seconds;
    }

private:
    struct Fill {
        const uint8_t* src;
        size_t offset, bytes;
    };
    struct Slot {
        DeviceBuffer staging;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        size_t used = 0;
        uint64_t pending = 0;
        std::vector<Fill> fills;
        std::vector<std::pair<const uint8_t*, size_t>> giveBack;
        std::vector<VkBufferCopy> regions;
        std::vector<VkBuffer> targets;
    };
    static double gib(uint64_t bytes) { return static_cast<double>(bytes) / double(1 << 30); }

    // The slot's memcpys in pieces of at most 4 MiB, taken by `threads_` threads in turn.
    void fillSlot(Slot& s) {
        constexpr size_t kPiece = size_t{4} << 20;
        std::vector<Fill> pieces;
        for (const Fill& f : s.fills)
            for (size_t done = 0; done < f.bytes; done += kPiece)
                pieces.push_back({f.src + done, f.offset + done, std::min(kPiece, f.bytes - done)});
        std::atomic<size_t> next{0};
        auto work = [&] {
            for (size_t i = next++; i < pieces.size(); i = next++)
                std::memcpy(static_cast<uint8_t*>(s.staging.mapped()) + pieces[i].offset, pieces[i].src, pieces[i].bytes);
        };
        std::vector<std::thread> helpers;
        const size_t extra = std::min(pieces.size(), static_cast<size_t>(threads_)) - (pieces.empty() ? 0 : 1);
        for (size_t t = 0; t < extra; ++t) helpers.emplace_back(work);
        work();
        for (auto& t : helpers) t.join();
    }

    void flush() {
        Slot& s = slots_[current_];
        if (s.used > 0) {
            fillSlot(s);
            check(vkResetCommandBuffer(s.cmd, 0), "vkResetCommandBuffer");
            VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
            check(vkBeginCommandBuffer(s.cmd, &begin), "vkBeginCommandBuffer");
            for (size_t i = 0; i < s.regions.size(); ++i) vkCmdCopyBuffer(s.cmd, s.staging.handle(), s.targets[i], 1, &s.regions[i]);
            check(vkEndCommandBuffer(s.cmd), "vkEndCommandBuffer");
            s.pending = queue_.submit(std::span<const VkCommandBuffer>(&s.cmd, 1));
            done_ += s.used;
            reportProgress();
        }
        // Tensors whose last byte is in this slot or before (an empty slot: a flush that fell on
        // a tensor's end) are in staging now: the device copy is the one used.
        for (const auto& [p, n] : s.giveBack) runtime::giveBackPages(p, n);
        s.giveBack.clear();
        current_ = (current_ + 1) % kSlots;
        Slot& next = slots_[current_];
        if (next.pending) queue_.wait(next.pending, kUploadTimeout, "weight upload");
        next.pending = 0;
        next.used = 0;
        next.fills.clear();
        next.regions.clear();
        next.targets.clear();
    }

    // A progress line on a terminal, once the load has taken a second.
    void reportProgress() {
        if (!showProgress_) return;
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        if (seconds < 1.0) return;
        std::fprintf(stderr, "\rzinc-rt: loading weights %.1f / %.1f GiB (%.0f %%), %.1f GiB/s", gib(done_), gib(total_),
                     100.0 * static_cast<double>(done_) / static_cast<double>(std::max<uint64_t>(total_, 1)),
                     gib(done_) / seconds);
        printed_ = true;
    }

    static constexpr int kSlots = 4;
    Queue& queue_;
    Slot slots_[kSlots];
    int current_ = 0;
    int threads_ = 1;
    uint64_t total_ = 0, done_ = 0;
    bool showProgress_ = false, printed_ = false;
    const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

DeviceMemoryBudget deviceMemoryBudget(const graph::Graph& graph, const graph::KvLayout& kv, int32_t maxBatch,
                                      uint64_t limitBytes, int32_t sequences) {
    const model::ModelConfig& c = *graph.config;
    DeviceMemoryBudget b;
    b.kvCacheBytes = 2 * uint64_t{2} * uint64_t(kv.rows) * uint64_t(c.kvDim()) * uint64_t(std::max(1, sequences));  // K and V, F16, per slot
    b.activationBytes = graph::planMemory(graph, maxBatch, sequences).arenaBytes;  // a hybrid's state a slot
    b.limitBytes = limitBytes;
    b.sequences = std::max(1, sequences);
    return b;
}

namespace {

void checkFits(const Device& device, uint64_t weightBytes, const DeviceMemoryBudget& budget) {
    const uint64_t heap = device.caps().deviceLocalBytes;
    const bool capped = budget.limitBytes > 0 && budget.limitBytes < heap;
    const uint64_t available = capped ? budget.limitBytes : heap;
    const uint64_t needed = weightBytes + budget.kvCacheBytes + budget.activationBytes;
    if (needed <= available) return;
    const auto mib = [](uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); };
    throw runtime::TierError(fmt::format(
        "vulkan tier: the model needs {:.1f} MiB of device memory (weights {:.1f}, KV cache {:.1f}{}, activations {:.1f}) "
        "but device {} ({}) has {:.1f} MiB{}; lower --ctx{} or --batch, or use a smaller model",
        mib(needed), mib(weightBytes), mib(budget.kvCacheBytes),
        budget.sequences > 1 ? fmt::format(" for {} sequence slots", budget.sequences) : std::string(), mib(budget.activationBytes),
        device.caps().index, device.caps().name, mib(available),
        capped ? fmt::format(" to use (--device-memory; {:.1f} MiB in all)", mib(heap)) : "",
        budget.sequences > 1 ? ", --parallel" : ""));
}

}  // namespace

WeightStore::WeightStore(const Device& device, Queue& queue, const graph::Graph& graph, const DeviceMemoryBudget& budget) {
    const auto tensors = tensorsOf(graph);
    const size_t limit = std::min<size_t>(kChunkLimit, device.caps().maxAllocationBytes);
    // Pack tensors into chunks in graph order.
    std::vector<std::vector<std::pair<const model::WeightRef*, size_t>>> plan(1);
    std::vector<size_t> chunkBytes(1, 0);
    for (const auto* w : tensors) {
        const size_t bytes = alignUp(tensorBytes(*w));
        if (bytes > device.caps().maxAllocationBytes)
            throw runtime::TierError(fmt::format("vulkan tier: tensor {} ({} bytes) exceeds the device's allocation limit {}",
                                                 w->name, bytes, device.caps().maxAllocationBytes));
        if (chunkBytes.back() > 0 && chunkBytes.back() + bytes > limit) {
            plan.emplace_back();
            chunkBytes.push_back(0);
        }
        plan.back().emplace_back(w, chunkBytes.back());
        chunkBytes.back() += bytes;
    }
    uint64_t weightBytes = 0;
    for (size_t bytes : chunkBytes) weightBytes += bytes;
    checkFits(device, weightBytes, budget);
    Uploader uploader(device, queue, weightBytes);
    for (size_t c = 0; c < plan.size(); ++c) {
        if (chunkBytes[c] == 0) continue;
        chunks_.emplace_back(device, chunkBytes[c], MemoryKind::DeviceLocal, "weights");
        for (const auto& [w, offset] : plan[c]) {
            uploader.copy(w->data, tensorBytes(*w), chunks_.back(), offset);
            addresses_[w->data] = chunks_.back().address() + offset;
        }
        bytes_ += chunkBytes[c];
    }
    uploadSeconds_ = uploader.finish();
}

VkDeviceAddress WeightStore::address(const model::WeightRef& w) const {
    const auto it = addresses_.find(w.data);
    if (it == addresses_.end()) throw runtime::TierError(fmt::format("vulkan tier: tensor {} was not uploaded", w.name));
    return it->second;
}

}  // namespace zinc::vk
