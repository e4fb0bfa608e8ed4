#include "tools/serve/response_writer.h"

#include "tools/serve/ollama_api.h"

namespace zinc::serve {
namespace {

using namespace std::chrono_literals;
constexpr auto kPollInterval = 100ms;  // how often a waiting response checks that its client is still there

}  // namespace

ResponseWriter::ResponseWriter(std::shared_ptr<Job> job, PreparedRequest request, Metrics& metrics)
    : job_(std::move(job)), header_(std::move(request.header)), stream_(request.stream),
      includeUsage_(request.includeUsage), wire_(request.wire), parser_(request.splitReasoning, request.toolFormat),
      metrics_(metrics), arrived_(Clock::now()) {}

bool ResponseWriter::operator()(httplib::DataSink& sink) {
    while (true) {
        Job::Update update = job_->waitForUpdate(kPollInterval);
        if (!update.text.empty() && !firstText_) firstText_ = Clock::now();
        if (parsed()) {
            if (!release(sink, parser_.push(update.text))) return false;
        } else if (stream_ && !update.text.empty()) {
            if (!write(sink, sseEvent(textChunk(header_, update.text, false)))) return false;
        } else {
            text_ += update.text;
        }
        if (update.finished) return finish(sink);
        if (!sink.is_writable()) {
            job_->cancel();
            return false;
        }
    }
}

bool ResponseWriter::write(httplib::DataSink& sink, std::string_view bytes) {
    if (sink.write(bytes.data(), bytes.size())) return true;
    job_->cancel();
    return false;
}

// Streams a delta (OpenAI chat: the first chunk always, with the role), or keeps it for the
// whole answer.
bool ResponseWriter::release(httplib::DataSink& sink, const AssistantDelta& delta) {
    if (!stream_) {
        answer_.reasoning += delta.reasoning;
        answer_.content += delta.content;
        answer_.toolCalls.insert(answer_.toolCalls.end(), delta.toolCalls.begin(), delta.toolCalls.end());
        return true;
    }
    if (wire_ != Wire::OpenAi) {
        return delta.empty() || write(sink, dumpJson(ollamaChunk(header_.model, delta, wire_ == Wire::OllamaChat)) + "\n");
    }
    if (delta.empty() && !first_) return true;
    const bool ok = write(sink, sseEvent(chatDeltaChunk(header_, delta, first_, toolCalls_)));
    first_ = false;
    toolCalls_ += delta.toolCalls.size();
    return ok;
}

bool ResponseWriter::finish(httplib::DataSink& sink) {
    const JobResult result = job_->result();
    record(result);
    const bool failed = result.reason == FinishReason::Error || result.reason == FinishReason::Cancelled;
    if (parsed() && !failed && !release(sink, parser_.finish())) return false;
    if (!write(sink, finalBody(result))) return false;
    sink.done();
    return true;
}

std::string ResponseWriter::finalBody(const JobResult& result) {
    const bool ollama = wire_ != Wire::OpenAi;
    if (result.reason == FinishReason::Error || result.reason == FinishReason::Cancelled) {
        const std::string message = result.reason == FinishReason::Error ? "generation failed: " + result.error
                                                                         : "the request was cancelled: the server is stopping";
        if (ollama) return dumpJson({{"error", message}}) + "\n";
        const ApiError error(500, message, "server_error");
        return stream_ ? sseEvent(errorJson(error)) + std::string(kSseDone) : dumpJson(errorJson(error));
    }
    if (ollama) {
        const auto ns = [](Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); };
        const auto now = Clock::now();
        const auto first = firstText_.value_or(now);
        const OllamaTimes times{ns(now - arrived_), ns(first - arrived_), ns(now - first)};
        return dumpJson(ollamaDone(header_.model, stream_ ? AssistantDelta{} : answer_, wire_ == Wire::OllamaChat, result, times)) + "\n";
    }
    if (stream_) {
        std::string out = sseEvent(finishChunk(header_, result, toolCalls_ > 0));
        if (includeUsage_) out += sseEvent(usageChunk(header_, result));
        out.append(kSseDone);  // (not `out + std::string(..)`: GCC 12 warns -Wrestrict on it, a false positive)
        return out;
    }
    return dumpJson(header_.endpoint == Endpoint::Chat ? fullChatResponse(header_, answer_, result)
                                                       : fullResponse(header_, text_, result));
}

void ResponseWriter::record(const JobResult& result) {
    const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    const auto now = Clock::now();
    const double first = firstText_ ? seconds(*firstText_ - arrived_) : seconds(now - arrived_);
    const double perToken =
        firstText_ && result.completionTokens > 1 ? seconds(now - *firstText_) / (result.completionTokens - 1) : -1;
    metrics_.recordGeneration(first, perToken, result.promptTokens, result.completionTokens);
}

}  // namespace zinc::serve
