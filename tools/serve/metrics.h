#pragma once
// GET /metrics: what the server has done, in Prometheus' text exposition format (version
// 0.0.4): requests by route and status, tokens in and out, time to first token and time per
// output token as histograms, the last reply's decode rate, the queue and the process's
// resident memory (Prometheus' process_resident_memory_bytes). Thread-safe.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace zinc::serve {

class Metrics {
public:
    void countRequest(const std::string& route, int status);
    // One finished generation: seconds from arrival to the first text, seconds per output token
    // after it (negative: fewer than two tokens), and its token counts.
    void recordGeneration(double firstTokenSeconds, double perTokenSeconds, int32_t promptTokens, int32_t completionTokens);
    std::string render(size_t waiting, size_t queueCapacity) const;

private:
    struct Histogram {
        static constexpr std::array<double, 12> kBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
        std::array<uint64_t, kBounds.size()> buckets{};  // not cumulative; summed when rendered
        uint64_t count = 0;
        double sum = 0;
        void observe(double seconds);
        void render(std::string& out, const char* name, const char* help) const;
    };

    mutable std::mutex mutex_;
    std::map<std::pair<std::string, int>, uint64_t> requests_;
    uint64_t promptTokens_ = 0, completionTokens_ = 0;
    double lastTokensPerSecond_ = 0;
    Histogram firstToken_, perToken_;
};

}  // namespace zinc::serve
