#pragma once
// The server's request queue: first in, first out, at most `capacity` items waiting. A full
// queue refuses at once (the HTTP layer answers 429) instead of making clients wait unbounded.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace zinc::serve {

template <class T>
class BoundedFifo {
public:
    explicit BoundedFifo(size_t capacity) : capacity_(capacity) {}

    // False when the queue is full or closed; the item is not taken then.
    bool tryPush(T item) {
        {
            std::lock_guard lock(mutex_);
            if (closed_ || items_.size() >= capacity_) return false;
            items_.push_back(std::move(item));
        }
        ready_.notify_one();
        return true;
    }

    // Blocks until an item arrives; nullopt once the queue is closed and drained.
    std::optional<T> pop() {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return closed_ || !items_.empty(); });
        if (items_.empty()) return std::nullopt;
        T item = std::move(items_.front());
        items_.pop_front();
        return item;
    }

    // The first item if one is waiting, without blocking.
    std::optional<T> tryPop() {
        std::lock_guard lock(mutex_);
        if (items_.empty()) return std::nullopt;
        T item = std::move(items_.front());
        items_.pop_front();
        return item;
    }

    // Refuses new items and wakes the consumer; items already queued can still be popped.
    void close() {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
        }
        ready_.notify_all();
    }

    size_t size() const {
        std::lock_guard lock(mutex_);
        return items_.size();
    }
    size_t capacity() const { return capacity_; }
    bool closedAndEmpty() const {
        std::lock_guard lock(mutex_);
        return closed_ && items_.empty();
    }

private:
    const size_t capacity_;
    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<T> items_;
    bool closed_ = false;
};

}  // namespace zinc::serve
