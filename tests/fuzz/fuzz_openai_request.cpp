// Arbitrary bytes as the body of POST /v1/chat/completions and /v1/completions (`zinc-rt
// serve`): parsed or refused with ApiError (a 400 naming the field), nothing else escapes.
// What is accepted keeps the parser's promises: at most kMaxStopStrings stop strings, each
// non-empty valid UTF-8 of at most kMaxStopLength bytes. Then the accepted text (message
// contents, the prompt) goes through StopMatcher with those stops, one character at a time:
// what it releases must be the text up to the first stop string, nothing of the stop itself.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/tokenizer/utf8.h"
#include "tools/serve/api_error.h"
#include "tools/serve/openai_request.h"
#include "tools/serve/stop_matcher.h"

using namespace zinc;
using namespace zinc::serve;

namespace {

void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz_openai_request: %s\n", what);
    std::abort();
}

void checkStops(const GenerationParams& p) {
    check(p.stop.size() <= kMaxStopStrings, "more stop strings than the limit");
    for (const std::string& s : p.stop)
        check(!s.empty() && s.size() <= kMaxStopLength && model::utf8::isValid(s), "a stop string breaks the parser's promise");
}

// Feeds `text` one UTF-8 character at a time and compares with the text cut at its first stop.
void checkStopMatcher(const std::vector<std::string>& stops, const std::string& text) {
    size_t cut = text.size();
    for (const std::string& s : stops) cut = std::min(cut, text.find(s));
    StopMatcher matcher(stops);
    std::string released;
    for (size_t at = 0; at < text.size();) {
        const size_t n = std::min(text.size() - at, model::utf8::leadLength(uint8_t(text[at])));
        released += matcher.push(std::string_view(text).substr(at, n));
        at += n;
    }
    released += matcher.finish();
    check(released == text.substr(0, cut), "StopMatcher released other text than the text before the first stop");
    check(matcher.stopped() == (cut != text.size()), "StopMatcher's stopped() disagrees with the text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    try {
        const ChatRequest r = parseChatRequest(body);
        checkStops(r.params);
        for (const model::ChatMessage& m : r.messages) checkStopMatcher(r.params.stop, m.content);
    } catch (const ApiError&) {
    }
    try {
        const CompletionRequest r = parseCompletionRequest(body);
        checkStops(r.params);
        checkStopMatcher(r.params.stop, r.prompt);
    } catch (const ApiError&) {
    }
    return 0;
}
