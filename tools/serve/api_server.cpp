#include "tools/serve/api_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include "model/model_error.h"
#include "tools/serve/api_error.h"
#include "tools/serve/batch_engine.h"
#include "tools/serve/chat_page.h"
#include "tools/serve/chat_prompt.h"
#include "tools/serve/engine_worker.h"
#include "tools/serve/grammar_constraint.h"
#include "tools/serve/metrics.h"
#include "tools/serve/openai_request.h"
#include "tools/serve/ollama_api.h"
#include "tools/serve/openai_response.h"
#include "tools/serve/response_writer.h"
#include "tools/serve/tool_prompt.h"

namespace zinc::serve {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr size_t kMaxBodyBytes = 32u << 20;
constexpr const char* kJson = "application/json";

int64_t unixSeconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void sendError(httplib::Response& res, const ApiError& e) {
    res.status = e.status();
    if (e.status() == 429) res.set_header("Retry-After", "1");
    res.set_content(errorBody(e), kJson);
}

// A route handler whose exceptions become error answers, written by `send` (the API's shape).
template <typename Handler, typename Send>
auto guard(Handler handler, Send send) {
    return [handler, send](const httplib::Request& req, httplib::Response& res) {
        try {
            handler(req, res);
        } catch (const ApiError& e) {
            send(res, e);
        } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
            send(res, ApiError::badRequest(fmt::format("invalid request body: {}", e.what())));
        } catch (const std::exception& e) {
            send(res, ApiError(500, e.what(), "server_error"));
        }
    };
}

// The routes and their methods, for 405 and for bounded metric labels.
struct Route {
    const char* path;
    const char* method;
};
constexpr Route kRoutes[] = {
    {"/", "GET"},
    {"/health", "GET"},
    {"/metrics", "GET"},
    {"/v1/models", "GET"},
    {"/v1/chat/completions", "POST"},
    {"/v1/completions", "POST"},
    {"/v1/tokenize", "POST"},
    {"/v1/detokenize", "POST"},
    {"/api/chat", "POST"},
    {"/api/generate", "POST"},
    {"/api/show", "POST"},
    {"/api/tags", "GET"},
    {"/api/version", "GET"},
};

const Route* findRoute(const std::string& path) {
    for (const Route& r : kRoutes)
        if (path == r.path) return &r;
    return nullptr;
}

std::string routeLabel(const std::string& path) {
    if (findRoute(path)) return path;
    if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
    return "other";
}

// One request at a time, or continuous batching.
std::unique_ptr<Engine> makeEngine(const model::Model& model, runtime::Tier& tier, const ServerOptions& options) {
    if (options.parallel > 1)
        return std::make_unique<BatchEngine>(model, tier, options.parallel, options.prefillChunk, options.queue);
    return std::make_unique<EngineWorker>(model, tier, options.queue);
}

}  // namespace

struct ApiServer::Impl {
    Impl(const model::Model& m, runtime::Tier& tier, ServerOptions o)
        : model(m),
          options(std::move(o)),
          family(model::resolveChatTemplate(m.tokenizer().chatTemplate(), options.templateName)),
          pieces(std::make_shared<TokenPieces>(m.tokenizer())),
          worker(makeEngine(m, tier, options)),
          started(unixSeconds()),
          tierName(tier.describe()) {}

    void routes();
    void handleGeneration(const httplib::Request& req, httplib::Response& res, Endpoint endpoint);
    void submit(PreparedRequest r, httplib::Response& res);
    void ollamaRoutes();
    json ollamaModelJson() const;
    PreparedRequest prepareChat(std::string_view body);
    PreparedRequest prepareCompletion(std::string_view body);
    void finishInput(const GenerationParams& params, PreparedRequest& r, const char* promptParam);
    json modelJson() const;
    // Before routing: CORS headers, the OPTIONS preflight, the API key.
    httplib::Server::HandlerResponse preRoute(const httplib::Request& req, httplib::Response& res);
    void tokenize(const httplib::Request& req, httplib::Response& res);
    void detokenize(const httplib::Request& req, httplib::Response& res);

    const model::Model& model;
    ServerOptions options;
    model::ChatTemplateFamily family;
    std::shared_ptr<const TokenPieces> pieces;  // for structured output's token mask
    std::unique_ptr<Engine> worker;
    Metrics metrics;
    httplib::Server http;
    int64_t started;
    std::string tierName;
    std::atomic<uint64_t> nextId{1};
    int port = -1;
    int listenSocket = -1;  // the socket bind() listens on (set by the socket-options hook)
};

json ApiServer::Impl::modelJson() const {
    return {{"id", options.modelName}, {"object", "model"}, {"created", started}, {"owned_by", "zinc-rt"}};
}

void ApiServer::Impl::finishInput(const GenerationParams& params, PreparedRequest& r, const char* promptParam) {
    if (!params.model.empty() && params.model != options.modelName)
        throw ApiError(404, fmt::format("The model '{}' does not exist (this server has '{}')", params.model, options.modelName),
                       "invalid_request_error", "model", "model_not_found");
    const size_t context = static_cast<size_t>(worker->contextLength());
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
    if (params.grammar) r.input.constraint = std::make_shared<GrammarConstraint>(params.grammar, pieces);
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
    r.splitReasoning = chat.splitReasoning;
    r.toolFormat = chat.tools.active() ? toolCallFormat(family) : ToolCallFormat::None;
    try {
        auto grammar = toolCallGrammar(family, chat.tools);
        // A forced call wins over response_format; strict arguments in a free answer do not.
        if (grammar && (grammar->trigger.empty() || !chat.params.grammar)) chat.params.grammar = std::move(grammar);
    } catch (const GrammarError& e) {
        throw ApiError::badRequest(fmt::format("'tools': {}", e.what()), "tools");
    }
    try {
        const auto messages = renderToolConversation(family, chat.messages, chat.messageToolCalls, chat.tools);
        r.input.prompt = encodeConversation(model.tokenizer(), family, messages,
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
    submit(endpoint == Endpoint::Chat ? prepareChat(req.body) : prepareCompletion(req.body), res);
}

void ApiServer::Impl::submit(PreparedRequest r, httplib::Response& res) {
    auto job = std::make_shared<Job>(std::move(r.input));
    if (!worker->submit(job))
        throw ApiError(429, fmt::format("the server is busy: {} requests are already waiting (--queue {}); retry later",
                                        worker->queueCapacity(), worker->queueCapacity()),
                       "requests", "", "rate_limit_exceeded");
    const bool stream = r.stream;
    if (stream) res.set_header("Cache-Control", "no-cache");
    const char* type = r.wire != Wire::OpenAi ? (stream ? "application/x-ndjson" : kJson) : stream ? "text/event-stream" : kJson;
    auto writer = std::make_shared<ResponseWriter>(job, std::move(r), metrics);
    res.set_chunked_content_provider(
        type,
        [writer](size_t, httplib::DataSink& sink) { return (*writer)(sink); },
        // Also runs when the provider never did (the client left before the headers went out).
        [job](bool) { job->cancel(); });
}

void ApiServer::Impl::routes() {
    auto guarded = [](auto handler) { return guard(handler, sendError); };
    http.Get("/health", guarded([this](const httplib::Request&, httplib::Response& res) {
        const auto counts = worker->counts();
        res.set_content(dumpJson({{"status", "ok"},
                                  {"model", options.modelName},
                                  {"tier", tierName},
                                  {"waiting", worker->waiting()},
                                  {"queue_capacity", worker->queueCapacity()},
                                  {"running", worker->running()},
                                  {"parallel", options.parallel},
                                  {"completed", counts.completed},
                                  {"cancelled", counts.cancelled},
                                  {"failed", counts.failed}}),
                        kJson);
    }));
    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(std::string(chatPageHtml()), "text/html; charset=utf-8");
    });
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
    http.Get("/metrics", guarded([this](const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics.render(worker->waiting(), worker->queueCapacity()), "text/plain; version=0.0.4");
    }));
    http.Post("/v1/tokenize", guarded([this](const httplib::Request& req, httplib::Response& res) { tokenize(req, res); }));
    http.Post("/v1/detokenize", guarded([this](const httplib::Request& req, httplib::Response& res) { detokenize(req, res); }));
    ollamaRoutes();
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) { return preRoute(req, res); });
    // Whatever httplib answers by itself (unknown URL, body too large, bad HTTP) in the same shape.
    http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        const Route* route = findRoute(req.path);
        // httplib answers 400 by itself for a POST without a body (no Content-Length).
        if (route && (res.status == 404 || res.status == 400) && req.method != route->method) {
            res.status = 405;
            res.set_header("Allow", route->method);
            const std::string message = fmt::format("Method {} is not allowed for {}: use {}", req.method, req.path, route->method);
            res.set_content(errorBody(ApiError(405, message, "invalid_request_error", "", "method_not_allowed")), kJson);
            return httplib::Server::HandlerResponse::Handled;
        }
        const std::string message =
            res.status == 404                   ? fmt::format("Unknown request URL: {} {}", req.method, req.path)
            : res.status == 400 && req.body.empty() ? "the request body is empty: send a JSON object (Content-Type: application/json)"
                                                : fmt::format("HTTP {} for {} {}", res.status, req.method, req.path);
        res.set_content(errorBody(ApiError(res.status, message, "invalid_request_error")), kJson);
        return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        sendError(res, ApiError(500, "internal error", "server_error"));
    });
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
        metrics.countRequest(routeLabel(req.path), res.status);
        if (options.logRequests) fmt::print(stderr, "{} {} {}\n", req.method, req.path, res.status);
    });
    http.set_payload_max_length(kMaxBodyBytes);
    http.set_tcp_nodelay(true);  // a streamed token goes out at once, not after the client's delayed ACK
    // Every waiting request holds an HTTP thread; leave room for /health and for 429 answers.
    const size_t threads = options.queue + static_cast<size_t>(options.parallel) + 16;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
}

json ApiServer::Impl::ollamaModelJson() const {
    const auto& c = model.config();
    return {{"name", options.modelName},
            {"model", options.modelName},
            {"modified_at", ollamaTimestamp()},
            {"size", 0},
            {"digest", ""},
            {"details",
             {{"format", "gguf"}, {"family", c.archName}, {"families", {c.archName}}, {"parameter_size", ""}, {"quantization_level", ""}}}};
}

// Ollama's API: errors are {"error": "..."}.
void ApiServer::Impl::ollamaRoutes() {
    auto guarded = [](auto handler) {
        return guard(handler, [](httplib::Response& res, const ApiError& e) {
            res.status = e.status();
            res.set_content(dumpJson({{"error", e.what()}}), kJson);
        });
    };
    http.Get("/api/version", guarded([](const httplib::Request&, httplib::Response& res) {
        res.set_content(dumpJson({{"version", "0.6.0"}}), kJson);
    }));
    http.Get("/api/tags", guarded([this](const httplib::Request&, httplib::Response& res) {
        res.set_content(dumpJson({{"models", json::array({ollamaModelJson()})}}), kJson);
    }));
    http.Post("/api/show", guarded([this](const httplib::Request& req, httplib::Response& res) {
        const json body = parseJsonObject(req.body);
        const std::string name = body.value("model", body.value("name", ""));
        if (name != options.modelName && name != options.modelName + ":latest")
            throw ApiError(404, fmt::format("model '{}' not found", name));
        const auto& c = model.config();
        json info = {{"general.architecture", c.archName}, {c.archName + ".context_length", worker->contextLength()}};
        res.set_content(dumpJson({{"modelfile", ""},
                                  {"parameters", ""},
                                  {"template", model.tokenizer().chatTemplate()},
                                  {"details", ollamaModelJson()["details"]},
                                  {"model_info", info},
                                  {"capabilities", {"completion", "tools"}}}),
                        kJson);
    }));
    http.Post("/api/chat", guarded([this](const httplib::Request& req, httplib::Response& res) {
        PreparedRequest r = prepareChat(dumpJson(ollamaChatToOpenAi(parseJsonObject(req.body), options.modelName)));
        r.wire = Wire::OllamaChat;
        submit(std::move(r), res);
    }));
    http.Post("/api/generate", guarded([this](const httplib::Request& req, httplib::Response& res) {
        const json body = parseJsonObject(req.body);
        bool raw = false;
        const json openAi = ollamaGenerateToOpenAi(body, options.modelName, raw);
        if (body.value("prompt", "").empty()) {  // Ollama's way to load a model: nothing to generate
            res.set_content(dumpJson({{"model", options.modelName}, {"created_at", ollamaTimestamp()}, {"response", ""},
                                      {"done", true}, {"done_reason", "load"}}) + "\n",
                            kJson);
            return;
        }
        PreparedRequest r = raw ? prepareCompletion(dumpJson(openAi)) : prepareChat(dumpJson(openAi));
        r.wire = Wire::OllamaGenerate;
        submit(std::move(r), res);
    }));
}

httplib::Server::HandlerResponse ApiServer::Impl::preRoute(const httplib::Request& req, httplib::Response& res) {
    using HR = httplib::Server::HandlerResponse;
    const std::string origin = req.get_header_value("Origin");
    const auto& allowed = options.corsOrigins;
    if (!origin.empty() && std::any_of(allowed.begin(), allowed.end(), [&](const std::string& o) { return o == "*" || o == origin; })) {
        res.set_header("Access-Control-Allow-Origin", origin);
        res.set_header("Vary", "Origin");
    }
    if (req.method == "OPTIONS") {  // a preflight: never needs the key, browsers do not send it
        const Route* route = findRoute(req.path);
        const std::string methods = std::string(route ? route->method : "GET, POST") + ", OPTIONS";
        res.status = 204;
        res.set_header("Allow", methods);
        if (res.has_header("Access-Control-Allow-Origin")) {
            res.set_header("Access-Control-Allow-Methods", methods);
            res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
            res.set_header("Access-Control-Max-Age", "600");
        }
        return HR::Handled;
    }
    if (options.apiKey.empty() || req.path == "/health" || req.path == "/") return HR::Unhandled;
    if (req.get_header_value("Authorization") == "Bearer " + options.apiKey) return HR::Unhandled;
    const bool sent = req.has_header("Authorization");
    sendError(res, ApiError(401,
                            sent ? "Incorrect API key provided in the Authorization header"
                                 : "No API key provided: send the header 'Authorization: Bearer KEY' (the server runs with --api-key)",
                            "invalid_request_error", "", "invalid_api_key"));
    res.set_header("WWW-Authenticate", "Bearer");
    return HR::Handled;
}

void ApiServer::Impl::tokenize(const httplib::Request& req, httplib::Response& res) {
    const json body = parseJsonObject(req.body);
    const auto content = body.find("content");
    if (content == body.end() || !content->is_string()) throw ApiError::badRequest("'content' must be a string", "content");
    const bool addSpecial = body.value("add_special", false);
    const bool withPieces = body.value("with_pieces", false);
    const auto ids = model.tokenizer().encode(content->get<std::string>(), addSpecial, true);
    json tokens = json::array();
    for (int32_t id : ids) {
        if (withPieces) tokens.push_back({{"id", id}, {"piece", model.tokenizer().tokenToPiece(id, true)}});
        else tokens.push_back(id);
    }
    res.set_content(dumpJson({{"tokens", tokens}}), kJson);
}

void ApiServer::Impl::detokenize(const httplib::Request& req, httplib::Response& res) {
    const json body = parseJsonObject(req.body);
    const auto tokens = body.find("tokens");
    if (tokens == body.end() || !tokens->is_array()) throw ApiError::badRequest("'tokens' must be an array of token ids", "tokens");
    std::vector<int32_t> ids;
    for (const json& t : *tokens) {
        if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= model.config().nVocab)
            throw ApiError::badRequest(fmt::format("'tokens' must hold token ids below {}", model.config().nVocab), "tokens");
        ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
    res.set_content(dumpJson({{"content", model.tokenizer().decode(ids)}}), kJson);
}

ApiServer::ApiServer(const model::Model& model, runtime::Tier& tier, ServerOptions options) {
    if (options.modelName.empty()) throw std::invalid_argument("ApiServer: a model name is required");
    if (options.queue == 0) throw std::invalid_argument("ApiServer: --queue must be at least 1");
    impl_ = std::make_unique<Impl>(model, tier, std::move(options));
    impl_->routes();
    // cpp-httplib's default socket options add SO_REUSEPORT, with which a second server on a
    // port in use binds too and the kernel splits the connections between the two processes.
    // SO_REUSEADDR alone lets a restart rebind past TIME_WAIT and refuses a port that is taken.
    impl_->http.set_socket_options([impl = impl_.get()](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        impl->listenSocket = sock;
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
    // The shared cpp-httplib listens with a backlog of 5 (compiled in): many clients connecting at
    // once overflow it and wait for SYN retries or fail. Linux takes a second listen() as a new
    // backlog; failing that, the old one stays.
    if (impl_->listenSocket >= 0) ::listen(impl_->listenSocket, SOMAXCONN);
    return impl_->port = port;
}

bool ApiServer::listen() { return impl_->http.listen_after_bind(); }

void ApiServer::stop() {
    if (!impl_) return;
    impl_->worker->stop();
    impl_->http.stop();
}

}  // namespace zinc::serve
