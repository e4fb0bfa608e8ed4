#pragma once
// Generated text -> the text a client may see. StopMatcher cuts the answer before the first
// stop string and holds back any tail that could still become one, so a stop string never
// leaks, not even in part. TextStream puts the tokenizer's StreamingDecoder (whole UTF-8
// characters only) in front of it: every chunk it returns is valid UTF-8.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer/tokenizer.h"

namespace zinc::serve {

class StopMatcher {
public:
    // Stop strings must be non-empty valid UTF-8 (the request parser guarantees it), so a cut
    // before one never splits a character.
    explicit StopMatcher(std::vector<std::string> stops);

    // Appends text; returns what can be released now. Once a stop string is seen, stopped()
    // is true, the returned text ends right before it, and later calls return "".
    std::string push(std::string_view text);
    // The held-back tail when generation ends without a stop string.
    std::string finish();
    bool stopped() const { return stopped_; }

private:
    size_t heldTailLength() const;

    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

class TextStream {
public:
    // atTextStart: see StreamingDecoder (false when continuing after a prompt).
    TextStream(const model::Tokenizer& tokenizer, std::vector<std::string> stops, bool atTextStart = false);

    std::string push(int32_t id);
    std::string finish();
    bool stopped() const { return stop_.stopped(); }

private:
    model::StreamingDecoder decoder_;
    StopMatcher stop_;
};

}  // namespace zinc::serve
