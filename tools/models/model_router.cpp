#include "tools/models/model_router.h"

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <thread>

#include "tools/models/model_cache.h"
#include "tools/serve/api_error.h"

namespace zinc::tools::models {
using nlohmann::json;

// A loaded model: its engine and the ApiServer answering for it on a loopback port. Destroyed
// (server stopped, engine freed) when unloaded and the last request using it is done.
struct ModelRouter::Resident {
    std::string name;
    std::unique_ptr<Engine> engine;
    std::unique_ptr<serve::ApiServer> server;
    int port = 0;
    std::thread thread;
    ~Resident() {
        if (server) server->stop();
        if (thread.joinable()) thread.join();
    }
};

ModelRouter::ModelRouter(const GlobalOptions& global, serve::ServerOptions server, size_t maxModels)
    : global_(global), server_(std::move(server)), maxModels_(maxModels), http_(std::make_unique<httplib::Server>()) {
    auto send = [](httplib::Response& res, const serve::ApiError& e) {
        res.status = e.status();
        res.set_content(serve::errorBody(e), "application/json");
    };
    http_->Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
        json data = json::array();
        std::lock_guard lock(loadMutex_);
        for (const CachedModel& m : listCached()) {
            bool loaded = false;
            for (const auto& r : resident_) loaded = loaded || r->name == m.name;
            data.push_back({{"id", m.name}, {"object", "model"}, {"owned_by", "zinc-rt"}, {"loaded", loaded}});
        }
        res.set_content(json{{"object", "list"}, {"data", data}}.dump(), "application/json");
    });
    http_->Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content(R"({"status":"ok"})", "application/json"); });
    for (const char* path : {"/v1/chat/completions", "/v1/completions"})
        http_->Post(path, [this, send](const httplib::Request& req, httplib::Response& res) {
            try {
                forward(req, res);
            } catch (const serve::ApiError& e) {
                send(res, e);
            } catch (const std::exception& e) {
                send(res, serve::ApiError(500, e.what(), "server_error"));
            }
        });
}

ModelRouter::~ModelRouter() { stop(); }

int ModelRouter::bind() {
    const int port = server_.port == 0 ? http_->bind_to_any_port(server_.host) : (http_->bind_to_port(server_.host, server_.port) ? server_.port : -1);
    if (port < 0) throw std::runtime_error(fmt::format("cannot listen on {}:{}", server_.host, server_.port));
    return port;
}

bool ModelRouter::listen() { return http_->listen_after_bind(); }

void ModelRouter::stop() {
    http_->stop();
    std::lock_guard lock(loadMutex_);
    resident_.clear();
}

std::shared_ptr<ModelRouter::Resident> ModelRouter::acquire(const std::string& name) {
    std::lock_guard lock(loadMutex_);
    for (auto it = resident_.begin(); it != resident_.end(); ++it)
        if ((*it)->name == name) {
            resident_.splice(resident_.begin(), resident_, it);
            return resident_.front();
        }
    while (resident_.size() >= maxModels_) {
        fmt::print(stderr, "zinc-rt serve: unloading {} (least recently used)\n", resident_.back()->name);
        resident_.pop_back();  // freed once its last request is done
    }
    auto r = std::make_shared<Resident>();
    r->name = name;
    GlobalOptions withSlots = global_;  // a KV region per parallel request
    withSlots.sequences = server_.parallel;
    r->engine = openEngine(findCached(name).path.string(), withSlots);
    serve::ServerOptions inner = server_;
    inner.host = "127.0.0.1";
    inner.port = 0;
    inner.modelName = name;
    r->server = std::make_unique<serve::ApiServer>(*r->engine->model, *r->engine->tier, inner);
    r->port = r->server->bind();
    r->thread = std::thread([server = r->server.get()] { server->listen(); });
    fmt::print(stderr, "zinc-rt serve: loaded {} ({})\n", name, r->engine->tier->describe());
    resident_.push_front(r);
    return r;
}

void ModelRouter::forward(const httplib::Request& req, httplib::Response& res) {
    json body;
    try {
        body = json::parse(req.body);
    } catch (const json::exception& e) {
        throw serve::ApiError::badRequest(fmt::format("the body is not JSON: {}", e.what()));
    }
    if (!body.is_object() || !body.contains("model") || !body["model"].is_string())
        throw serve::ApiError::badRequest("'model' is required: this server serves the cached models by name (GET /v1/models)", "model");
    std::string name;
    try {
        name = findCached(body["model"].get<std::string>()).name;
    } catch (const std::runtime_error&) {
        throw serve::ApiError(404, fmt::format("The model '{}' does not exist (GET /v1/models lists the cached ones)", body["model"].get<std::string>()),
                              "invalid_request_error", "model", "model_not_found");
    }
    const std::shared_ptr<Resident> model = acquire(name);
    body["model"] = name;
    auto request = std::make_shared<httplib::Request>();
    request->method = "POST";
    request->path = req.path;
    request->body = body.dump();
    request->headers.emplace("Content-Type", "application/json");
    const bool stream = body.value("stream", false);
    if (!stream) {
        httplib::Client client("127.0.0.1", model->port);
        client.set_read_timeout(3600);
        auto result = client.send(*request);
        if (!result) throw std::runtime_error(fmt::format("model {}: {}", name, httplib::to_string(result.error())));
        res.status = result->status;
        res.set_content(result->body, result->get_header_value("Content-Type"));
        return;
    }
    // Server-sent events, passed on as they come; the model stays resident until the stream ends.
    res.set_chunked_content_provider("text/event-stream", [model, request](size_t, httplib::DataSink& sink) {
        httplib::Client client("127.0.0.1", model->port);
        client.set_read_timeout(3600);
        request->content_receiver = [&sink](const char* data, size_t n, uint64_t, uint64_t) { return sink.write(data, n); };
        client.send(*request);
        sink.done();
        return true;
    });
}

}  // namespace zinc::tools::models
