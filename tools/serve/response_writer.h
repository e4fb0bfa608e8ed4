#pragma once
// Turns a job's released text into what the client asked for, on the HTTP thread that owns
// the connection: OpenAI server-sent events or one JSON body (chat: reasoning, content and
// tool calls apart), or Ollama's NDJSON lines. Cancels the job when the client goes away, and
// records the request's timings in the metrics.
#include <httplib.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "tools/serve/assistant_output.h"
#include "tools/serve/job.h"
#include "tools/serve/metrics.h"
#include "tools/serve/openai_response.h"

namespace zinc::serve {

enum class Wire { OpenAi, OllamaChat, OllamaGenerate };

// What a request turned into, ready for the queue.
struct PreparedRequest {
    ResponseHeader header;
    JobInput input;
    bool stream = false;
    bool includeUsage = false;
    bool splitReasoning = true;  // chat: <think> blocks -> reasoning_content
    ToolCallFormat toolFormat = ToolCallFormat::None;
    Wire wire = Wire::OpenAi;
};

class ResponseWriter {
public:
    ResponseWriter(std::shared_ptr<Job> job, PreparedRequest request, Metrics& metrics);

    // The content provider: returns false (and cancels) when the client went away.
    bool operator()(httplib::DataSink& sink);

private:
    using Clock = std::chrono::steady_clock;
    bool write(httplib::DataSink& sink, std::string_view bytes);
    bool release(httplib::DataSink& sink, const AssistantDelta& delta);
    bool finish(httplib::DataSink& sink);
    std::string finalBody(const JobResult& result);
    void record(const JobResult& result);
    bool parsed() const { return wire_ != Wire::OpenAi || header_.endpoint == Endpoint::Chat; }

    std::shared_ptr<Job> job_;
    ResponseHeader header_;
    bool stream_;
    bool includeUsage_;
    Wire wire_;
    AssistantOutputParser parser_;
    bool first_ = true;
    size_t toolCalls_ = 0;   // streamed so far
    AssistantDelta answer_;  // parsed, not streaming: the whole answer
    std::string text_;       // completions, not streaming
    Metrics& metrics_;
    Clock::time_point arrived_;
    std::optional<Clock::time_point> firstText_;
};

}  // namespace zinc::serve
