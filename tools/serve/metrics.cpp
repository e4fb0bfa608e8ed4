#include "tools/serve/metrics.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>

namespace zinc::serve {
namespace {

// The process's resident set (Linux /proc/self/statm, field 2 in pages); 0 where unreadable.
double residentBytes() {
    std::ifstream statm("/proc/self/statm");
    uint64_t size = 0, resident = 0;
    if (!(statm >> size >> resident)) return 0;
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

}  // namespace

void Metrics::countRequest(const std::string& route, int status) {
    std::lock_guard lock(mutex_);
    ++requests_[{route, status}];
}

void Metrics::recordGeneration(double firstTokenSeconds, double perTokenSeconds, int32_t promptTokens,
                               int32_t completionTokens) {
    std::lock_guard lock(mutex_);
    promptTokens_ += static_cast<uint64_t>(promptTokens);
    completionTokens_ += static_cast<uint64_t>(completionTokens);
    if (completionTokens > 0) firstToken_.observe(firstTokenSeconds);
    if (perTokenSeconds > 0) {
        perToken_.observe(perTokenSeconds);
        lastTokensPerSecond_ = 1.0 / perTokenSeconds;
    }
}

void Metrics::Histogram::observe(double seconds) {
    for (size_t i = 0; i < kBounds.size(); ++i) {
        if (seconds <= kBounds[i]) {
            ++buckets[i];
            break;
        }
    }
    ++count;
    sum += seconds;
}

void Metrics::Histogram::render(std::string& out, const char* name, const char* help) const {
    out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kBounds.size(); ++i) {
        cumulative += buckets[i];
        out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, kBounds[i], cumulative);
    }
    out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count, name, sum, name, count);
}

std::string Metrics::render(size_t waiting, size_t queueCapacity) const {
    std::lock_guard lock(mutex_);
    std::string out;
    out += "# HELP zinc_requests_total HTTP requests answered, by route and status.\n# TYPE zinc_requests_total counter\n";
    for (const auto& [key, n] : requests_)
        out += fmt::format("zinc_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", key.first, key.second, n);
    auto single = [&](const char* name, const char* type, const char* help, double value) {
        out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
    };
    single("zinc_prompt_tokens_total", "counter", "Prompt tokens of finished generations.", static_cast<double>(promptTokens_));
    single("zinc_generated_tokens_total", "counter", "Tokens generated.", static_cast<double>(completionTokens_));
    single("zinc_tokens_per_second", "gauge", "Decode rate of the last reply of two tokens or more.", lastTokensPerSecond_);
    single("zinc_queue_waiting", "gauge", "Requests waiting for the engine.", static_cast<double>(waiting));
    single("zinc_queue_capacity", "gauge", "Requests that may wait (--queue).", static_cast<double>(queueCapacity));
    single("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", residentBytes());
    firstToken_.render(out, "zinc_time_to_first_token_seconds", "Seconds from a request's arrival to its first text.");
    perToken_.render(out, "zinc_time_per_output_token_seconds", "Seconds per generated token after the first.");
    return out;
}

}  // namespace zinc::serve
