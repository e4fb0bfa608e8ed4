#pragma once
// `zinc-rt serve`: an OpenAI- and Ollama-compatible HTTP API over one model on one tier.
//   GET  /health, GET /v1/models, GET /v1/models/{id}, GET /metrics (Prometheus text)
//   POST /v1/chat/completions, POST /v1/completions   (streaming as server-sent events, or not)
//   POST /v1/tokenize, POST /v1/detokenize, GET / (the web chat page)
//   Ollama's POST /api/chat, /api/generate, /api/show, GET /api/tags, /api/version
// Chat answers carry reasoning_content and tool_calls apart; response_format and forced tool
// calls are sampled under a grammar. --api-key, CORS (--cors), OPTIONS preflight, and 405 for
// a known URL with the wrong method.
// One engine thread generates, one request at a time or up to --parallel together (continuous
// batching, tools/serve/batch_engine.h); requests wait in a bounded FIFO (429 when it is full). A client
// that goes away cancels its request. Every error is OpenAI's error JSON (Ollama's on /api/).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/tier.h"

namespace zinc::serve {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;                 // 0: any free port (bind() says which)
    size_t queue = 4;                // requests that may wait while `parallel` are generated
    int32_t parallel = 1;            // requests generated together (continuous batching; the tier holds as many KV slots)
    int32_t prefillChunk = 64;       // --parallel > 1: prompt tokens a step takes beside the others' decode rows
    std::string modelName;           // the id clients send as "model"; required
    std::string templateName;        // chat template family by name; empty: from the GGUF
    bool enableThinking = true;      // Qwen3, when a request does not say
    runtime::SamplerParams sampling; // defaults for what a request leaves out (seed: drawn per request)
    bool logRequests = true;         // one line per request on stderr
    std::string apiKey;              // non-empty: every route but /health and the chat page needs "Authorization: Bearer KEY"
    std::vector<std::string> corsOrigins;  // origins browsers may call from ("*": any); none: no CORS headers
};

class ApiServer {
public:
    // Resolves the chat template (throws model::ModelError naming an unknown one) and starts
    // the engine thread. model and tier must outlive the server.
    ApiServer(const model::Model& model, runtime::Tier& tier, ServerOptions options);
    ~ApiServer();
    ApiServer(const ApiServer&) = delete;
    ApiServer& operator=(const ApiServer&) = delete;

    // Binds host:port; returns the port (the one picked for port 0). Throws std::runtime_error.
    int bind();
    // Serves until stop() (true) or until accepting connections fails (false); call after bind().
    bool listen();
    // Stops listening, cancels the running and queued requests; safe from any thread.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace zinc::serve
