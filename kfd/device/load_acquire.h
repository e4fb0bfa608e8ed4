#pragma once
// A word the GPU writes (a fence, a sampled id), read by the host with acquire order.
#include <atomic>

namespace zinc::kfd {

template <class T>
T loadAcquire(const T* p) {
    return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_acquire);
}

}  // namespace zinc::kfd
