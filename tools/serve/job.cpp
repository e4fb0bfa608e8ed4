#include "tools/serve/job.h"

namespace zinc::serve {

const char* finishReasonName(FinishReason reason) {
    switch (reason) {
        case FinishReason::Stop: return "stop";
        case FinishReason::Length: return "length";
        case FinishReason::Cancelled: return "cancelled";
        case FinishReason::Error: return "error";
    }
    return "stop";
}

void Job::pushText(std::string_view text) {
    if (text.empty()) return;
    {
        std::lock_guard lock(mutex_);
        pending_ += text;
    }
    changed_.notify_all();
}

void Job::finish(JobResult result) {
    {
        std::lock_guard lock(mutex_);
        result_ = std::move(result);
        finished_ = true;
    }
    changed_.notify_all();
}

Job::Update Job::waitForUpdate(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return finished_ || !pending_.empty(); });
    return {std::exchange(pending_, {}), finished_};
}

JobResult Job::waitForResult() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return finished_; });
    return result_;
}

JobResult Job::result() const {
    std::lock_guard lock(mutex_);
    return result_;
}

}  // namespace zinc::serve
