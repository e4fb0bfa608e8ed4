#pragma once
// Where generation stands in a JsonGrammar: a stack of frames (the text around the value, the
// value not yet started, an object, an array, a string, a number, a literal), fed one byte at a
// time. feed() says whether a byte may come next; complete() whether the text so far is a whole
// match; shortestCompletion() how many bytes at least finish it, so that the engine can leave
// room to close every brace before max_tokens runs out. Copying a matcher is cheap (the stack
// holds pointers into the grammar), which is how tokens are tried without committing.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "tools/serve/json_grammar.h"

namespace zinc::serve {

class JsonMatcher {
public:
    explicit JsonMatcher(std::shared_ptr<const JsonGrammar> grammar);

    // False (and the matcher is then unusable) when the byte cannot come next.
    bool feed(uint8_t byte);
    bool feed(std::string_view bytes) {
        for (char c : bytes)
            if (!feed(static_cast<uint8_t>(c))) return false;
        return true;
    }
    // The text so far is a whole match (a top-level number may still go on).
    bool complete() const;
    // Nothing more may follow.
    bool closed() const { return stack_.empty(); }
    // Bytes of the shortest text that completes the match (0 once complete).
    int32_t shortestCompletion() const;

private:
    enum class FrameKind : uint8_t { Text, Value, Object, FreeObject, Array, String, Number, Literal, Prefixed };
    struct Frame {
        FrameKind kind;
        uint8_t phase = 0;
        uint8_t nextLo = 0x80, nextHi = 0xBF;  // the range of a string's next continuation byte
        const SchemaNode* node = nullptr;
        int32_t count = 0;      // characters, items, or the next property index
        int32_t pos = 0;        // bytes into a literal or key; continuation bytes owed in a string
        uint64_t alive = 0;     // literals / keys still matching
        const std::string* text = nullptr;  // Text frames
    };

    bool feedFrame(Frame& f, uint8_t c, bool& again);
    bool start(Frame& f, uint8_t c);  // a Value frame becomes the frame of what c starts
    std::optional<bool> objectPunctuation(Frame& f, uint8_t c, bool mayClose, bool mayContinue);
    bool feedObject(Frame& f, uint8_t c);
    bool feedFreeObject(Frame& f, uint8_t c);
    bool feedArray(Frame& f, uint8_t c, bool& again);
    bool feedString(Frame& f, uint8_t c);
    bool feedNumber(Frame& f, uint8_t c, bool& again);
    bool feedLiteral(Frame& f, uint8_t c, bool& again);
    bool feedPrefixed(Frame& f, uint8_t c);
    void push(FrameKind kind, const SchemaNode* node);
    int32_t frameCompletion(const Frame& f) const;

    std::shared_ptr<const JsonGrammar> grammar_;
    std::vector<Frame> stack_;  // the innermost frame last
};

// Whether a value of `node` can start with byte c.
bool canStart(const SchemaNode& node, uint8_t c);

}  // namespace zinc::serve
