#pragma once
// `zinc-rt serve` with no model: the cached models by name, as Ollama and llama-server's router
// mode serve them. GET /v1/models lists every cached model; a generation request is passed to
// the model its "model" field names, loaded on first use into its own ApiServer (tools/serve)
// listening on a loopback port of its own. At most --max-models stay resident; the least
// recently used is unloaded when its requests are done; loads happen one at a time. A name
// that is not cached is OpenAI's 404 model_not_found.
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "tools/cli_common.h"
#include "tools/serve/api_server.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace zinc::tools::models {

class ModelRouter {
public:
    // server: the options every loaded model's ApiServer gets (host/port are the router's own).
    ModelRouter(const GlobalOptions& global, serve::ServerOptions server, size_t maxModels);
    ~ModelRouter();

    int bind();     // the router's port (the one picked for port 0)
    bool listen();  // until stop()
    void stop();    // stops listening and unloads every model

private:
    struct Resident;
    std::shared_ptr<Resident> acquire(const std::string& name);
    void forward(const httplib::Request& req, httplib::Response& res);

    const GlobalOptions& global_;
    serve::ServerOptions server_;
    size_t maxModels_;
    std::mutex loadMutex_;                            // one load (and LRU change) at a time
    std::list<std::shared_ptr<Resident>> resident_;  // most recently used first
    std::unique_ptr<httplib::Server> http_;
};

}  // namespace zinc::tools::models
