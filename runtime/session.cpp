#include "runtime/session.h"

#include <fmt/format.h>

#include <algorithm>

#include "graph/kv_layout.h"

namespace zinc::runtime {
namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

Session::Session(const model::ModelConfig& config, Tier& tier)
    : config_(config), tier_(tier), logits_(static_cast<size_t>(config.nVocab)) {}

void Session::checkRoom(size_t n) const {
    if (history_.size() + n > static_cast<size_t>(tier_.contextLength()))
        throw ContextFull(fmt::format("context full: {} tokens cached + {} new > context length {} (use --ctx to raise it)",
                                    history_.size(), n, tier_.contextLength()));
}

std::span<const float> Session::feed(std::span<const int32_t> tokens, const FeedProgress& progress) {
    if (tokens.empty()) return logits_;
    checkRoom(tokens.size());
    const auto start = std::chrono::steady_clock::now();
    const size_t batch = static_cast<size_t>(tier_.maxBatch());
    for (size_t i = 0; i < tokens.size(); i += batch) {
        const auto chunk = tokens.subspan(i, std::min(batch, tokens.size() - i));
        tier_.evaluate(chunk, static_cast<int32_t>(history_.size()), LogitsWanted::Last, logits_);
        history_.insert(history_.end(), chunk.begin(), chunk.end());
        if (progress) progress(i + chunk.size(), tokens.size());
    }
    stats_.prefillTokens += static_cast<int64_t>(tokens.size());
    stats_.prefillSeconds += secondsSince(start);
    return logits_;
}

int32_t Session::feedReusingPrefix(std::span<const int32_t> prompt, const FeedProgress& progress) {
    size_t common = 0;
    while (common < history_.size() && common < prompt.size() && history_[common] == prompt[common]) ++common;
    if (common == prompt.size() && common > 0) --common;  // re-run the last token for its logits
    if (!config_.hybrid.enabled()) {
        // A sliding-window layer's ring may have overwritten keys the rewound position needs.
        const auto stored = static_cast<int32_t>(history_.size());
        if (!graph::planKv(config_, tier_.contextLength(), tier_.maxBatch()).canResumeAt(static_cast<int32_t>(common), stored))
            common = 0;
        history_.resize(common);
        feed(prompt.subspan(common), progress);
        return static_cast<int32_t>(common);
    }
    return feedHybrid(prompt, common, progress);
}

// The recurrent state goes on from the end of the history, from the snapshot, or from zero.
int32_t Session::feedHybrid(std::span<const int32_t> prompt, size_t common, const FeedProgress& progress) {
    if (common != history_.size()) {
        const bool fromSnapshot = snapshotAt_ >= 0 && static_cast<size_t>(snapshotAt_) <= common;
        if (fromSnapshot) tier_.restoreStateSnapshot();
        common = fromSnapshot ? static_cast<size_t>(snapshotAt_) : 0;
        if (!fromSnapshot) snapshotAt_ = -1;  // its tokens are about to be overwritten
    }
    history_.resize(common);
    const size_t total = prompt.size() - common;
    if (total < 2) {
        feed(prompt.subspan(common), progress);
        return static_cast<int32_t>(common);
    }
    // Snapshot before the last token: the next turn's prompt starts with all but it.
    const auto head = prompt.subspan(common, total - 1);
    feed(head, [&](size_t done, size_t) { if (progress) progress(done, total); });
    if (tier_.saveStateSnapshot()) snapshotAt_ = static_cast<int64_t>(history_.size());
    feed(prompt.subspan(prompt.size() - 1), [&](size_t done, size_t) { if (progress) progress(head.size() + done, total); });
    return static_cast<int32_t>(common);
}

std::span<const float> Session::step(int32_t token) {
    checkRoom(1);
    const auto start = std::chrono::steady_clock::now();
    tier_.evaluate(std::span<const int32_t>(&token, 1), static_cast<int32_t>(history_.size()), LogitsWanted::Last,
                   logits_);
    history_.push_back(token);
    stats_.decodeTokens += 1;
    stats_.decodeSeconds += secondsSince(start);
    return logits_;
}

std::vector<int32_t> Session::stepSampled(int32_t token, int32_t n, Sampler& sampler) {
    checkRoom(static_cast<size_t>(n));
    const auto start = std::chrono::steady_clock::now();
    std::vector<int32_t> fed = history_;
    fed.push_back(token);
    auto ids = tier_.generateSampled(token, static_cast<int32_t>(history_.size()), n, sampler, fed, config_.nVocab);
    history_.push_back(token);
    history_.insert(history_.end(), ids.begin(), ids.end() - 1);
    stats_.decodeTokens += n;
    stats_.decodeSeconds += secondsSince(start);
    return ids;
}

void Session::reset() {
    history_.clear();
    snapshotAt_ = -1;
}

}  // namespace zinc::runtime
