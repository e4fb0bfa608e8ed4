// `zinc-rt serve`: the OpenAI-compatible HTTP API (tools/serve) on a model opened on --tier.
// Prints "listening on http://HOST:PORT" on stdout once requests can be taken; SIGINT or
// SIGTERM stops it cleanly (running and queued requests are cancelled).
#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include "model/tokenizer/chat_template.h"
#include "tools/cli_common.h"
#include "tools/models/model_cache.h"
#include "tools/models/model_router.h"
#include "tools/serve/api_server.h"

namespace zinc::tools {
namespace {

// `--parallel`'s default on the vulkan tier (1 elsewhere): four streams share each weight read;
// the KV cache (and a hybrid's recurrent state) grows four times.
constexpr int32_t kGpuDefaultParallel = 4;

struct ServeOptions {
    std::string model;
    int32_t parallel = 0;  // --parallel; 0: kGpuDefaultParallel on the vulkan tier, else 1
    size_t maxModels = 1;
    serve::ServerOptions server;
    bool noThink = false;
};

// SIGINT/SIGTERM are blocked in every thread (the mask is inherited) and taken here instead,
// so that stopping the server happens on an ordinary thread.
class StopOnSignal {
public:
    template <typename Server>  // serve::ApiServer or models::ModelRouter
    explicit StopOnSignal(Server& server) {
        thread_ = std::thread([this, &server] {
            sigset_t set = stopSignals();
            const timespec tick{0, 200'000'000};
            while (!done_) {
                if (sigtimedwait(&set, nullptr, &tick) > 0) {
                    server.stop();
                    return;
                }
            }
        });
    }
    ~StopOnSignal() {
        done_ = true;
        thread_.join();
    }
    static sigset_t stopSignals() {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        return set;
    }

private:
    std::atomic<bool> done_{false};
    std::thread thread_;
};

// Serves until SIGINT/SIGTERM; a listen that fails is an error.
template <typename Server>  // serve::ApiServer or models::ModelRouter
void serveUntilStopped(Server& server, int port) {
    bool listened = false;
    {
        StopOnSignal stopper(server);
        listened = server.listen();
    }
    server.stop();
    if (!listened) throw std::runtime_error(fmt::format("accepting connections on port {} failed", port));
    fmt::print(stderr, "zinc-rt serve: stopped\n");
}

// No model given: the cached models by name (tools/models/model_router.h).
void runModelRouter(ServeOptions& o, const GlobalOptions& global) {
    o.server.enableThinking = !o.noThink;
    models::ModelRouter router(global, o.server, o.maxModels);
    const int port = router.bind();
    fmt::print("zinc-rt serve: the cached models of {} by name (up to {} resident) listening on http://{}:{}\n",
               models::cacheDir().string(), o.maxModels, o.server.host, port);
    std::fflush(stdout);
    serveUntilStopped(router, port);
}

void runServe(ServeOptions& o, const GlobalOptions& global) {
    const sigset_t stopSignals = StopOnSignal::stopSignals();
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    o.server.parallel = std::max(o.parallel, 1);
    if (o.model.empty()) return runModelRouter(o, global);
    GlobalOptions withSlots = global;  // the tier holds a KV region per parallel request
    withSlots.sequences = o.server.parallel;
    if (o.parallel == 0) withSlots.gpuSequences = kGpuDefaultParallel;
    auto engine = openEngine(o.model, withSlots);
    if (o.parallel == 0) o.server.parallel = engine->tier->sequenceSlots();
    if (o.server.modelName.empty())
        o.server.modelName = std::filesystem::exists(o.model) ? std::filesystem::path(o.model).stem().string() : models::findCached(o.model).name;
    o.server.enableThinking = !o.noThink;
    serve::ApiServer server(*engine->model, *engine->tier, o.server);
    const int port = server.bind();
    fmt::print(stderr, "model: {}\ntier: {}\nqueue: {} waiting requests at most, {} generated together{}\n",
               engine->model->config().summary(), engine->tier->describe(), o.server.queue, o.server.parallel,
               o.server.parallel > 1 ? fmt::format(" (continuous batching, prompts in {}-token chunks)", o.server.prefillChunk)
                                     : std::string());
    const bool loopbackOnly = o.server.host == "127.0.0.1" || o.server.host == "localhost" || o.server.host == "::1";
    fmt::print("zinc-rt serve: model '{}' listening on http://{}:{}{}\n", o.server.modelName, o.server.host, port,
               loopbackOnly ? " (this machine only; --host 0.0.0.0 to take connections from others)" : "");
    std::fflush(stdout);
    serveUntilStopped(server, port);
}

}  // namespace

void addServeCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<ServeOptions>();
    auto* cmd = app.add_subcommand("serve", "HTTP server: OpenAI API (/v1/...), Ollama API (/api/...), web chat at /, /metrics");
    cmd->add_option("model", o->model, "GGUF model file or cached model name; none: every cached model, by the request's \"model\"");
    cmd->add_option("--max-models", o->maxModels, "without a model: models kept loaded at once (least recently used unloaded)")
        ->capture_default_str()
        ->check(allowedRange(1, 64));
    cmd->add_option("--host", o->server.host, "address to listen on")->capture_default_str();
    cmd->add_option("--port", o->server.port, "port; 0 = any free port (printed when ready)")
        ->capture_default_str()->check(CLI::Range(0, 65535));
    cmd->add_option("--queue", o->server.queue, "requests that may wait while --parallel run; more get 429")
        ->capture_default_str()->check(CLI::Range(1, 4096));
    cmd->add_option("--parallel", o->parallel,
                    fmt::format("requests generated together in batched steps (continuous batching; the KV cache grows as "
                                "many times) [default: {} on the vulkan tier, 1 on the others]",
                                kGpuDefaultParallel))
        ->check(CLI::Range(1, 256));
    cmd->add_option("--prefill-chunk", o->server.prefillChunk,
                    "with --parallel > 1: prompt tokens a step takes beside the running requests' tokens")
        ->capture_default_str()->check(CLI::Range(1, 65536));
    cmd->add_option("--model-name", o->server.modelName, "the model id clients use (default: the file name without .gguf)");
    cmd->add_option("--template", o->server.templateName,
                    "override the chat template family: chatml, qwen3, llama3, llama2, gemma, phi3");
    cmd->add_option("--api-key", o->server.apiKey,
                    "require 'Authorization: Bearer KEY' on every route but /health and the chat page (401 without it)");
    cmd->add_option("--cors", o->server.corsOrigins,
                    "origins a browser page may call the API from, e.g. http://localhost:3000, or * for any (default: none)")
        ->allow_extra_args(false);
    cmd->add_flag("--no-think", o->noThink, "Qwen3: answer without a thinking block unless a request asks for one");
    addSamplingOptions(*cmd, o->server.sampling);
    cmd->callback([o, &global] { runServe(*o, global); });
}

}  // namespace zinc::tools
