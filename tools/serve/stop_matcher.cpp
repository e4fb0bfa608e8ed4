#include "tools/serve/stop_matcher.h"

#include <algorithm>
#include <utility>

namespace zinc::serve {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

// The longest tail of held_ that is the start of some stop string (the whole stop string was
// looked for already, so only proper prefixes matter).
size_t StopMatcher::heldTailLength() const {
    size_t longest = 0;
    for (const std::string& stop : stops_) {
        for (size_t n = std::min(held_.size(), stop.size() - 1); n > longest; --n) {
            if (std::string_view(held_).substr(held_.size() - n) == std::string_view(stop).substr(0, n)) {
                longest = n;
                break;
            }
        }
    }
    return longest;
}

std::string StopMatcher::push(std::string_view text) {
    if (stopped_) return {};
    held_ += text;
    size_t first = std::string::npos;
    for (const std::string& stop : stops_) first = std::min(first, held_.find(stop));
    if (first != std::string::npos) {
        stopped_ = true;
        std::string out = held_.substr(0, first);
        held_.clear();
        return out;
    }
    const size_t keep = heldTailLength();
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

std::string StopMatcher::finish() {
    if (stopped_) return {};
    return std::exchange(held_, {});
}

TextStream::TextStream(const model::Tokenizer& tokenizer, std::vector<std::string> stops, bool atTextStart)
    : decoder_(tokenizer, true, atTextStart), stop_(std::move(stops)) {}

std::string TextStream::push(int32_t id) { return stop_.push(decoder_.push(id)); }

std::string TextStream::finish() {
    std::string out = stop_.push(decoder_.finish());
    return out + stop_.finish();
}

}  // namespace zinc::serve
