#pragma once
// One streaming completion as a client meets it (for `zinc-rt bench-serve`): POST
// /v1/completions with "stream": true on a loopback server, the server-sent events read as they
// arrive, and what the client saw: status, time to the first text, the text, the usage's
// completion_tokens, and whether the stream ended with [DONE], an error event, or was cut.
#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace zinc::tools::bench_serve {

struct StreamOutcome {
    int status = 0;             // HTTP status; 0: no response (connection refused, reset)
    std::string transportError; // what the client library said when the exchange failed
    double firstTextSeconds = -1;  // from sending to the first non-empty text; -1: none came
    double totalSeconds = 0;
    double sentSeconds = 0;        // when the request was sent, from the start of the run (bench-serve sets it)
    std::string text;
    int32_t completionTokens = 0;  // from the final usage chunk
    bool done = false;             // "data: [DONE]" arrived
    std::string errorEvent;        // an error event's message (a terminated stream)
    bool cut = false;              // a 200 stream that ended with neither [DONE] nor an error event (a reset)
    std::string body;              // a non-200 answer's body
};

// host: "127.0.0.1", "localhost" or "::1" (bench-serve drives loopback servers only).
StreamOutcome streamCompletion(const std::string& host, int port, const nlohmann::json& request,
                               std::chrono::seconds timeout);

}  // namespace zinc::tools::bench_serve
