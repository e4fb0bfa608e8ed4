#include "model/make_model/ordered_pipeline.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace zinc::model {
namespace {

class PipelineRun {
public:
    explicit PipelineRun(const OrderedPipeline& p)
        : p_(p), slots_(2 * static_cast<size_t>(std::max(1u, p.threads)) + 1) {
        for (auto& s : slots_) s.bytes.resize(p.maxChunkBytes);
    }

    void run() {
        std::vector<std::thread> workers;
        for (unsigned i = 0; i < std::max(1u, p_.threads); ++i) workers.emplace_back([this] { work(); });
        try {
            consumeAll();
        } catch (...) {
            fail(std::current_exception());
        }
        for (auto& w : workers) w.join();
        if (error_) std::rethrow_exception(error_);
    }

private:
    struct Slot {
        std::vector<uint8_t> bytes;
        size_t size = 0;
        size_t chunk = SIZE_MAX;  // the chunk it holds once ready
    };

    void work() {
        for (;;) {
            std::unique_lock lock(mutex_);
            if (aborted_ || next_ == p_.chunks) return;
            const size_t k = next_++;
            changed_.wait(lock, [&] { return aborted_ || k < consumed_ + slots_.size(); });
            if (aborted_) return;
            Slot& slot = slots_[k % slots_.size()];
            lock.unlock();
            try {
                slot.size = p_.produce(k, slot.bytes.data());
            } catch (...) {
                fail(std::current_exception());
                return;
            }
            lock.lock();
            slot.chunk = k;
            changed_.notify_all();
        }
    }

    void consumeAll() {
        for (size_t k = 0; k < p_.chunks; ++k) {
            Slot& slot = slots_[k % slots_.size()];
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] { return aborted_ || slot.chunk == k; });
                if (aborted_) return;
            }
            p_.consume(k, std::span<const uint8_t>(slot.bytes.data(), slot.size));
            std::lock_guard lock(mutex_);
            consumed_ = k + 1;
            changed_.notify_all();
        }
    }

    void fail(std::exception_ptr e) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = e;
        aborted_ = true;
        changed_.notify_all();
    }

    const OrderedPipeline& p_;
    std::vector<Slot> slots_;
    std::mutex mutex_;
    std::condition_variable changed_;
    size_t next_ = 0;      // next chunk to hand to a worker
    size_t consumed_ = 0;  // chunks consumed so far
    bool aborted_ = false;
    std::exception_ptr error_;
};

}  // namespace

void runOrderedPipeline(const OrderedPipeline& pipeline) {
    if (pipeline.chunks == 0) return;
    PipelineRun(pipeline).run();
}

}  // namespace zinc::model
