#pragma once
// The progress of one download on stderr: on a terminal one line rewritten in place (percent,
// MiB, rate, ETA), otherwise a plain line at every tenth of the file.
#include <chrono>
#include <cstdint>
#include <string>

namespace zinc::tools::models {

class PullProgress {
public:
    explicit PullProgress(std::string name);
    void start(uint64_t already, uint64_t total);  // a (re)started transfer
    void advance(uint64_t bytes);
    void note(const std::string& line);  // a line of its own (a retry)
    void finish();
    uint64_t done() const { return done_; }

private:
    void show();
    std::string name_;
    bool terminal_;
    uint64_t done_ = 0, total_ = 0, startedAt_ = 0;
    int lastTenth_ = -1;
    std::chrono::steady_clock::time_point started_, lastShown_;
};

}  // namespace zinc::tools::models
