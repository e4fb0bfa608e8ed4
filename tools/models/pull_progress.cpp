#include "tools/models/pull_progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace zinc::tools::models {
namespace {
double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }
}  // namespace

PullProgress::PullProgress(std::string name) : name_(std::move(name)), terminal_(isatty(STDERR_FILENO)) {}

void PullProgress::start(uint64_t already, uint64_t total) {
    done_ = startedAt_ = already;
    total_ = total;
    started_ = lastShown_ = std::chrono::steady_clock::now();
    if (already > 0) note(fmt::format("resuming at {:.1f} of {:.1f} MiB", mib(already), mib(total)));
    show();
}

void PullProgress::advance(uint64_t bytes) {
    done_ += bytes;
    const auto now = std::chrono::steady_clock::now();
    if (!terminal_ || now - lastShown_ > std::chrono::milliseconds(200) || done_ == total_) {
        lastShown_ = now;
        show();
    }
}

void PullProgress::show() {
    if (total_ == 0) return;
    const int percent = static_cast<int>(done_ * 100 / total_);
    if (!terminal_) {
        if (percent / 10 == lastTenth_) return;
        lastTenth_ = percent / 10;
        fmt::print(stderr, "pull {}: {}% ({:.1f} of {:.1f} MiB)\n", name_, percent, mib(done_), mib(total_));
        return;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const double rate = seconds > 0 ? static_cast<double>(done_ - startedAt_) / seconds : 0;
    const std::string eta = rate > 0 ? fmt::format("{:.0f} s", static_cast<double>(total_ - done_) / rate) : "?";
    constexpr int kWidth = 30;
    const int filled = percent * kWidth / 100;
    fmt::print(stderr, "\r\033[K{} [{}{}] {:3}% {:.1f}/{:.1f} MiB {:.1f} MiB/s ETA {}", name_, std::string(filled, '#'),
               std::string(kWidth - filled, ' '), percent, mib(done_), mib(total_), mib(static_cast<uint64_t>(rate)), eta);
}

void PullProgress::note(const std::string& line) {
    if (terminal_) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "pull {}: {}\n", name_, line);
}

void PullProgress::finish() {
    if (terminal_) fmt::print(stderr, "\n");
}

}  // namespace zinc::tools::models
