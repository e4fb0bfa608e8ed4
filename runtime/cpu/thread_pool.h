#pragma once
// A fixed pool of worker threads for the cpu tier. The calling thread takes part, so
// `threads` = 1 runs everything inline. Work is handed out in chunks from an atomic counter;
// workers spin briefly between ops (a decode token runs hundreds of small ops) and then
// sleep, so an idle pool costs nothing.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zinc::cpu {

class ThreadPool {
public:
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int threads() const { return static_cast<int>(workers_.size()) + 1; }

    // Calls fn(begin, end, thread) over [0, n) in chunks of `grain` items; returns when all
    // chunks are done. fn must not throw.
    using RangeFn = std::function<void(int64_t begin, int64_t end, int thread)>;
    void parallelFor(int64_t n, int64_t grain, const RangeFn& fn);

private:
    void workerLoop(int index);
    void runChunks(int thread);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> busy_{0};
    std::atomic<int64_t> next_{0};
    std::atomic<bool> stop_{false};
    const RangeFn* fn_ = nullptr;
    int64_t n_ = 0;
    int64_t grain_ = 1;
};

// Number of hardware threads, at least 1.
int defaultThreadCount();

}  // namespace zinc::cpu
