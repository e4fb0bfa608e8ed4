#include "runtime/queued_steps.h"

#include <algorithm>
#include <chrono>
#include <deque>

namespace zinc::runtime {

std::vector<int32_t> runQueuedSteps(int32_t n, int32_t ahead, const QueuedSteps& steps, TierStats& stats) {
    using Clock = std::chrono::steady_clock;
    const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    const auto start = Clock::now();
    double waited = 0;
    std::deque<uint64_t> inFlight;
    std::vector<int32_t> out;
    int32_t submitted = 0;
    while (static_cast<int32_t>(out.size()) < n) {
        while (submitted < n && submitted - static_cast<int32_t>(out.size()) < std::max(1, ahead)) {
            inFlight.push_back(steps.submit(submitted));
            ++submitted;
        }
        const auto step = static_cast<int32_t>(out.size());
        const uint64_t value = inFlight.front();
        inFlight.pop_front();
        const auto waitStart = Clock::now();
        steps.wait(step, value);
        waited += since(waitStart);
        out.push_back(steps.collect(step, value, inFlight.empty()));
    }
    stats.decodeTokens += n;
    stats.decodeSubmissions += n;
    stats.decodeHostSeconds += since(start) - waited;
    return out;
}

}  // namespace zinc::runtime
