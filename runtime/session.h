#pragma once
// One conversation's state on a tier: the tokens whose K/V sit in the cache, the last
// logits, and timing. Prompts are fed in batches (prefill); generated tokens one at a time.
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "model/model_config.h"
#include "runtime/tier.h"

namespace zinc::runtime {

struct SessionStats {
    int64_t prefillTokens = 0;
    double prefillSeconds = 0;
    int64_t decodeTokens = 0;
    double decodeSeconds = 0;
    double prefillTokensPerSecond() const { return prefillSeconds > 0 ? prefillTokens / prefillSeconds : 0; }
    double decodeTokensPerSecond() const { return decodeSeconds > 0 ? decodeTokens / decodeSeconds : 0; }
};

// Called after each prefill batch with the tokens run so far and the total. It may throw to
// abandon the rest (a cancelled request); the batches already run stay in the history.
using FeedProgress = std::function<void(size_t done, size_t total)>;

// A prompt or a token that does not fit the context: zinc-rt refuses (it does not slide the
// window or drop the oldest tokens); the message says how many tokens and the length.
class ContextFull : public TierError {
public:
    using TierError::TierError;
};

class Session {
public:
    Session(const model::ModelConfig& config, Tier& tier);

    // Appends tokens to the history and runs them (batched when more than one); returns the
    // logits after the last one. Throws ContextFull when the context would overflow.
    std::span<const float> feed(std::span<const int32_t> tokens, const FeedProgress& progress = {});
    // Chat turns: keeps the cached prefix shared with `prompt` and feeds only the rest (the
    // last prompt token is always run so that fresh logits exist). Returns how many tokens
    // were reused from the cache. Hybrid (DeltaNet) models cannot rewind their recurrent state:
    // they reuse the whole history, or the snapshot taken before the last prompt's last token
    // (a turn boundary the next turn shares), or else recompute from the start.
    int32_t feedReusingPrefix(std::span<const int32_t> prompt, const FeedProgress& progress = {});
    // Runs one token in decode mode (one graph step).
    std::span<const float> step(int32_t token);
    // Feeds `token` and n - 1 tokens the tier samples on the device (Tier::generateSampled);
    // returns the n sampled tokens, the last not yet fed. logits() are not updated.
    std::vector<int32_t> stepSampled(int32_t token, int32_t n, Sampler& sampler);
    void reset();

    const std::vector<int32_t>& history() const { return history_; }
    std::span<const float> logits() const { return logits_; }
    int32_t contextLength() const { return tier_.contextLength(); }
    int32_t remaining() const { return tier_.contextLength() - static_cast<int32_t>(history_.size()); }
    Tier& tier() { return tier_; }
    const SessionStats& stats() const { return stats_; }
    void resetStats() { stats_ = {}; }

private:
    void checkRoom(size_t n) const;
    int32_t feedHybrid(std::span<const int32_t> prompt, size_t common, const FeedProgress& progress);
    const model::ModelConfig& config_;
    Tier& tier_;
    std::vector<int32_t> history_;
    int64_t snapshotAt_ = -1;  // history length of the tier's recurrent-state snapshot (-1: none)
    std::vector<float> logits_;
    SessionStats stats_;
};

}  // namespace zinc::runtime
