#include "tools/serve/api_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <random>

#include "model/model_error.h"
#include "tools/serve/api_error.h"
#include "tools/serve/chat_prompt.h"
#include "tools/serve/engine_worker.h"
#include "tools/serve/openai_request.h"
#include "tools/serve/openai_response.h"

namespace zinc::serve {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr size_t kMaxBodyBytes = 32u << 20;
constexpr auto kPollInterval = 100ms;  // how often a waiting response checks that its client is still there
constexpr const char* kJson = "application/json";

int64_t unixSeconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void sendError(httplib::Response& res, const ApiError& e) {
    res.status = e.status();
    if (e.status() == 429) res.set_header("Retry-After", "1");
    res.set_content(errorBody(e), kJson);
}

// What a request turned into, ready for the queue.
struct PreparedRequest {
    ResponseHeader header;
    JobInput input;
    bool stream = false;
    bool includeUsage = false;
};

// Writes server-sent events (or one JSON body) as the job releases text; cancels the job when
// the client is gone. Runs on the HTTP thread that owns the connection.
class ResponseWriter {
public:
    ResponseWriter(std::shared_ptr<Job> job, PreparedRequest request)
        : job_(std::move(job)), header_(std::move(request.header)), stream_(request.stream),
          includeUsage_(request.includeUsage) {}

    // The content provider: returns false (and cancels) when the client went away.
    bool operator()(httplib::DataSink& sink) {
        bool first = true;
        std::string text;  // non-streaming: the whole answer
        while (true) {
            Job::Update update = job_->waitForUpdate(kPollInterval);
            if (stream_ && (!update.text.empty() || (first && header_.endpoint == Endpoint::Chat))) {
                if (!write(sink, sseEvent(textChunk(header_, update.text, first)))) return false;
                first = false;
            } else if (!stream_) {
                text += update.text;
            }
            if (update.finished) return finish(sink, text);
            if (!sink.is_writable()) {
                job_->cancel();
                return false;
            }
        }
    }

private:
    bool write(httplib::DataSink& sink, std::string_view bytes) {
        if (sink.write(bytes.data(), bytes.size())) return true;
        job_->cancel();
        return false;
    }

    bool finish(httplib::DataSink& sink, const std::string& text) {
        const JobResult result = job_->result();
        std::string out;
        if (result.reason == FinishReason::Error || result.reason == FinishReason::Cancelled) {
            const ApiError error(500, result.reason == FinishReason::Error ? "generation failed: " + result.error
                                                                            : "the request was cancelled: the server is stopping",
                                 "server_error");
            out = stream_ ? sseEvent(errorJson(error)) + std::string(kSseDone) : dumpJson(errorJson(error));
        } else if (stream_) {
            out = sseEvent(finishChunk(header_, result));
            if (includeUsage_) out += sseEvent(usageChunk(header_, result));
            out += kSseDone;
        } else {
            out = dumpJson(fullResponse(header_, text, result));
        }
        if (!write(sink, out)) return false;
        sink.done();
        return true;
    }

    std::shared_ptr<Job> job_;
    ResponseHeader header_;
    bool stream_;
    bool includeUsage_;
};

}  // namespace

struct ApiServer::Impl {
    Impl(const model::Model& m, runtime::Tier& tier, ServerOptions o)
        : model(m),
          options(std::move(o)),
          family(model::resolveChatTemplate(m.tokenizer().chatTemplate(), options.templateName)),
          worker(m, tier, options.queue),
          started(unixSeconds()) {}

    void routes();
    void handleGeneration(const httplib::Request& req, httplib::Response& res, Endpoint endpoint);
    PreparedRequest prepareChat(std::string_view body);
    PreparedRequest prepareCompletion(std::string_view body);
    void finishInput(const GenerationParams& params, PreparedRequest& r, const char* promptParam);
    json modelJson() const;

    const model::Model& model;
    ServerOptions options;
    model::ChatTemplateFamily family;
    EngineWorker worker;
    httplib::Server http;
    int64_t started;
    std::atomic<uint64_t> nextId{1};
    int port = -1;
};

json ApiServer::Impl::modelJson() const {
    return {{"id", options.modelName}, {"object", "model"}, {"created", started}, {"owned_by", "zinc-rt"}};
}

void ApiServer::Impl::finishInput(const GenerationParams& params, PreparedRequest& r, const char* promptParam) {
    if (!params.model.empty() && params.model != options.modelName)
        throw ApiError(404, fmt::format("The model '{}' does not exist (this server has '{}')", params.model, options.modelName),
                       "invalid_request_error", "model", "model_not_found");
    const size_t context = static_cast<size_t>(worker.contextLength());
    const size_t promptTokens = r.input.prompt.size();
    if (promptTokens == 0) throw ApiError::badRequest("the prompt is empty", promptParam);
    if (promptTokens >= context)
        throw ApiError::badRequest(fmt::format("This model's maximum context length is {} tokens, but the prompt has {} "
                                               "tokens; shorten it (or start the server with a larger --ctx)",
                                               context, promptTokens),
                                   promptParam, "context_length_exceeded");
    const int32_t vocab = model.config().nVocab;
    for (const auto& [id, bias] : params.logitBias) {
        if (id >= vocab) throw ApiError::badRequest(fmt::format("logit_bias names token {}, the vocabulary has {}", id, vocab), "logit_bias");
    }
    r.input.maxTokens = params.maxTokens.value_or(std::numeric_limits<int32_t>::max());
    r.input.stop = params.stop;
    r.input.sampling = params.sampling;
    r.input.sampling.seed = params.seed ? *params.seed : std::random_device{}();
    r.input.logitBias = params.logitBias;
    r.stream = params.stream;
    r.includeUsage = params.includeUsage;
    r.header.model = options.modelName;
    r.header.created = unixSeconds();
    r.header.id = fmt::format("{}-{:x}{:04x}", r.header.endpoint == Endpoint::Chat ? "chatcmpl" : "cmpl", started, nextId++);
}

PreparedRequest ApiServer::Impl::prepareChat(std::string_view body) {
    ChatRequest chat = parseChatRequest(body, options.sampling);
    PreparedRequest r;
    r.header.endpoint = Endpoint::Chat;
    try {
        r.input.prompt = encodeConversation(model.tokenizer(), family, chat.messages,
                                            chat.enableThinking.value_or(options.enableThinking));
    } catch (const model::ModelError& e) {  // e.g. a role the template has no place for
        throw ApiError::badRequest(e.what(), "messages");
    }
    finishInput(chat.params, r, "messages");
    return r;
}

PreparedRequest ApiServer::Impl::prepareCompletion(std::string_view body) {
    CompletionRequest completion = parseCompletionRequest(body, options.sampling);
    PreparedRequest r;
    r.header.endpoint = Endpoint::Completion;
    if (completion.promptIsTokens) {
        for (int32_t id : completion.promptTokens) {
            if (id >= model.config().nVocab)
                throw ApiError::badRequest(fmt::format("prompt token {} is outside the vocabulary ({} tokens)", id,
                                                       model.config().nVocab), "prompt");
        }
        r.input.prompt = std::move(completion.promptTokens);
    } else {
        r.input.prompt = model.tokenizer().encode(completion.prompt, true, true);
    }
    finishInput(completion.params, r, "prompt");
    return r;
}

void ApiServer::Impl::handleGeneration(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
    PreparedRequest r = endpoint == Endpoint::Chat ? prepareChat(req.body) : prepareCompletion(req.body);
    auto job = std::make_shared<Job>(std::move(r.input));
    if (!worker.submit(job))
        throw ApiError(429, fmt::format("the server is busy: {} requests are already waiting (--queue {}); retry later",
                                        worker.queueCapacity(), worker.queueCapacity()),
                       "requests", "", "rate_limit_exceeded");
    const bool stream = r.stream;
    if (stream) res.set_header("Cache-Control", "no-cache");
    auto writer = std::make_shared<ResponseWriter>(job, std::move(r));
    res.set_chunked_content_provider(
        stream ? "text/event-stream" : kJson,
        [writer](size_t, httplib::DataSink& sink) { return (*writer)(sink); },
        // Also runs when the provider never did (the client left before the headers went out).
        [job](bool) { job->cancel(); });
}

void ApiServer::Impl::routes() {
    auto guarded = [](auto handler) {
        return [handler](const httplib::Request& req, httplib::Response& res) {
            try {
                handler(req, res);
            } catch (const ApiError& e) {
                sendError(res, e);
            } catch (const std::exception& e) {
                sendError(res, ApiError(500, e.what(), "server_error"));
            }
        };
    };
    http.Get("/health", guarded([this](const httplib::Request&, httplib::Response& res) {
        const auto counts = worker.counts();
        res.set_content(dumpJson({{"status", "ok"},
                                  {"model", options.modelName},
                                  {"waiting", worker.waiting()},
                                  {"queue_capacity", worker.queueCapacity()},
                                  {"completed", counts.completed},
                                  {"cancelled", counts.cancelled},
                                  {"failed", counts.failed}}),
                        kJson);
    }));
    http.Get("/v1/models", guarded([this](const httplib::Request&, httplib::Response& res) {
        res.set_content(dumpJson({{"object", "list"}, {"data", json::array({modelJson()})}}), kJson);
    }));
    http.Get(R"(/v1/models/(.+))", guarded([this](const httplib::Request& req, httplib::Response& res) {
        if (req.matches[1] != options.modelName)
            throw ApiError(404, fmt::format("The model '{}' does not exist", req.matches[1].str()), "invalid_request_error",
                           "model", "model_not_found");
        res.set_content(dumpJson(modelJson()), kJson);
    }));
    http.Post("/v1/chat/completions", guarded([this](const httplib::Request& req, httplib::Response& res) {
        handleGeneration(req, res, Endpoint::Chat);
    }));
    http.Post("/v1/completions", guarded([this](const httplib::Request& req, httplib::Response& res) {
        handleGeneration(req, res, Endpoint::Completion);
    }));
    // Whatever httplib answers by itself (unknown URL, body too large, bad HTTP) in the same shape.
    http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        const std::string message = res.status == 404
                                        ? fmt::format("Unknown request URL: {} {}", req.method, req.path)
                                        : fmt::format("HTTP {} for {} {}", res.status, req.method, req.path);
        res.set_content(errorBody(ApiError(res.status, message, "invalid_request_error")), kJson);
        return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        sendError(res, ApiError(500, "internal error", "server_error"));
    });
    if (options.logRequests) {
        http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            fmt::print(stderr, "{} {} {}\n", req.method, req.path, res.status);
        });
    }
    http.set_payload_max_length(kMaxBodyBytes);
    // Every waiting request holds an HTTP thread; leave room for /health and for 429 answers.
    const size_t threads = options.queue + 16;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
}

ApiServer::ApiServer(const model::Model& model, runtime::Tier& tier, ServerOptions options) {
    if (options.modelName.empty()) throw std::invalid_argument("ApiServer: a model name is required");
    if (options.queue == 0) throw std::invalid_argument("ApiServer: --queue must be at least 1");
    impl_ = std::make_unique<Impl>(model, tier, std::move(options));
    impl_->routes();
    // cpp-httplib's default socket options add SO_REUSEPORT, with which a second server on a
    // port in use binds too and the kernel splits the connections between the two processes.
    // SO_REUSEADDR alone lets a restart rebind past TIME_WAIT and refuses a port that is taken.
    impl_->http.set_socket_options([](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
}

ApiServer::~ApiServer() { stop(); }

int ApiServer::bind() {
    const auto& o = impl_->options;
    errno = 0;
    const int port = o.port == 0 ? impl_->http.bind_to_any_port(o.host) : (impl_->http.bind_to_port(o.host, o.port) ? o.port : -1);
    if (port < 0)
        throw std::runtime_error(fmt::format("cannot listen on {}:{}{}", o.host, o.port,
                                             errno ? std::string(": ") + std::strerror(errno) : std::string()));
    return impl_->port = port;
}

bool ApiServer::listen() { return impl_->http.listen_after_bind(); }

void ApiServer::stop() {
    if (!impl_) return;
    impl_->worker.stop();
    impl_->http.stop();
}

}  // namespace zinc::serve
