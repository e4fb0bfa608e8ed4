#pragma once
// Produces numbered chunks on worker threads and consumes them on the calling thread in
// order: make-model generates weight blocks on every core while one thread streams them to
// disk. A ring of 2 * threads + 1 buffers bounds memory; a chunk's producer waits until the
// chunk that used its buffer before has been consumed.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace zinc::model {

struct OrderedPipeline {
    size_t chunks = 0;
    size_t maxChunkBytes = 0;
    unsigned threads = 1;
    // Fills `out` (maxChunkBytes) with chunk k and returns its size. Called on worker threads.
    std::function<size_t(size_t k, uint8_t* out)> produce;
    // Receives chunk k; called on the calling thread for k = 0, 1, 2, ... in order.
    std::function<void(size_t k, std::span<const uint8_t> bytes)> consume;
};

// Runs the pipeline; the first exception of a producer or the consumer is rethrown after all
// threads stopped.
void runOrderedPipeline(const OrderedPipeline& pipeline);

}  // namespace zinc::model
