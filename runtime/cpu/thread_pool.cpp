#include "runtime/cpu/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ZINC_CPU_RELAX() _mm_pause()
#else
#define ZINC_CPU_RELAX() ((void)0)
#endif

namespace zinc::cpu {

int defaultThreadCount() { return std::max(1u, std::thread::hardware_concurrency()); }

ThreadPool::ThreadPool(int threads) {
    for (int i = 1; i < std::max(1, threads); ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::runChunks(int thread) {
    for (;;) {
        const int64_t begin = next_.fetch_add(grain_, std::memory_order_relaxed);
        if (begin >= n_) break;
        (*fn_)(begin, std::min(n_, begin + grain_), thread);
    }
}

void ThreadPool::parallelFor(int64_t n, int64_t grain, const RangeFn& fn) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    if (workers_.empty() || n <= grain) {
        fn(0, n, 0);
        return;
    }
    fn_ = &fn;
    n_ = n;
    grain_ = grain;
    next_.store(0, std::memory_order_relaxed);
    busy_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    {
        std::lock_guard lock(mutex_);
        generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    runChunks(0);
    // Spin while the workers finish their last chunk; yield if they were descheduled (an
    // oversubscribed machine), so the wait never burns a core another thread needs.
    for (int spin = 0; busy_.load(std::memory_order_acquire) != 0; ++spin) {
        if (spin < 4096)
            ZINC_CPU_RELAX();
        else
            std::this_thread::yield();
    }
}

void ThreadPool::workerLoop(int index) {
    uint64_t seen = 0;
    for (;;) {
        // Spin a little first: the next op usually follows within microseconds.
        for (int spin = 0; spin < 20000 && generation_.load(std::memory_order_acquire) == seen; ++spin)
            ZINC_CPU_RELAX();
        if (generation_.load(std::memory_order_acquire) == seen) {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        }
        seen = generation_.load(std::memory_order_acquire);
        if (stop_) return;
        runChunks(index);
        busy_.fetch_sub(1, std::memory_order_acq_rel);
    }
}

}  // namespace zinc::cpu
