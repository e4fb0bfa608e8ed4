#pragma once
// What the HTTP side asks of whatever generates: take a job (or refuse it when the queue is
// full), stop, and the figures /health and /metrics show. Two engines: one request at a time
// (engine_worker.h, `serve --parallel 1`) and continuous batching (batch_engine.h).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tools/serve/job.h"

namespace zinc::serve {

class Engine {
public:
    virtual ~Engine() = default;
    // False when the queue is full (or the engine is stopping).
    virtual bool submit(std::shared_ptr<Job> job) = 0;
    // Cancels the running and the queued jobs (each still gets finish()) and joins the thread.
    virtual void stop() = 0;

    virtual int32_t contextLength() const = 0;
    virtual size_t queueCapacity() const = 0;
    virtual size_t waiting() const = 0;
    virtual size_t running() const = 0;  // requests being generated now

    // Jobs finished so far, by outcome (for /health).
    struct Counts {
        uint64_t completed = 0, cancelled = 0, failed = 0;
    };
    virtual Counts counts() const = 0;
};

}  // namespace zinc::serve
