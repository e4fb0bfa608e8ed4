// serve on the qwen35moe hybrid (cpu tier): three chat turns reuse the recurrent state through
// the session's snapshot (usage.prompt_tokens_details.cached_tokens > 0), and the third answer
// equals the one a fresh server gives to the same whole conversation. With --parallel 2 (a
// state per sequence slot) the same, the turns going on from their slot's state.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "tests/test_paths.h"
#include "tools/serve/api_server.h"

namespace zinc::serve {
namespace {

using nlohmann::json;

// One model, tier and server on a free port, listening until destroyed.
struct HybridServer {
    std::unique_ptr<model::Model> model = model::Model::load(test::sharedPath("models/qwen35moe-tiny.gguf"));
    graph::Graph graph = graph::buildDecodeGraph(model->config(), model->weights());
    std::unique_ptr<runtime::Tier> tier;
    std::unique_ptr<ApiServer> server;
    std::thread thread;
    int port = 0;

    // `parallel` sequences decoding together, as many slots; the delta rule token by token (its
    // chunked form, which a prompt split into steps would cut differently, is equal only within
    // rounding).
    explicit HybridServer(int32_t parallel = 1) {
        runtime::TierOptions options;
        options.threads = 1;
        options.contextLength = 256;
        options.sequences = parallel;
        options.deltaChunk = 0;
        tier = cpu::makeCpuTier(graph, options);
        ServerOptions so;
        so.parallel = parallel;
        so.port = 0;
        so.modelName = "q35";
        so.templateName = "qwen3";  // the tiny file carries no chat template
        so.logRequests = false;
        server = std::make_unique<ApiServer>(*model, *tier, so);
        port = server->bind();
        thread = std::thread([this] { server->listen(); });
    }
    ~HybridServer() {
        server->stop();
        thread.join();
    }
    json chat(const json& messages) {
        httplib::Client client("127.0.0.1", port);
        client.set_read_timeout(60);
        const json body = {{"messages", messages}, {"max_tokens", 4}, {"temperature", 0}};
        auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
        EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no response");
        return res ? json::parse(res->body) : json::object();
    }
};

void expectThreeChatTurnsReuseTheRecurrentState(int32_t parallel) {
    HybridServer server(parallel);
    json messages = json::array();
    json last;
    for (int turn = 0; turn < 3; ++turn) {
        messages.push_back({{"role", "user"}, {"content", "question number " + std::to_string(turn)}});
        last = server.chat(messages);
        const int cached = last["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>();
        if (turn > 0) {
            EXPECT_GT(cached, 0) << "turn " << turn << ", --parallel " << parallel;
        }
        EXPECT_LT(cached, last["usage"]["prompt_tokens"].get<int>());
        messages.push_back({{"role", "assistant"}, {"content", last["choices"][0]["message"]["content"]}});
    }
    messages.erase(messages.end() - 1);
    HybridServer fresh;
    const json again = fresh.chat(messages);
    EXPECT_EQ(again["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 0);
    EXPECT_EQ(again["choices"][0]["message"]["content"], last["choices"][0]["message"]["content"]) << "--parallel " << parallel;
}

TEST(ServeHybrid, ThreeChatTurnsReuseTheRecurrentState) { expectThreeChatTurnsReuseTheRecurrentState(1); }

TEST(ServeHybrid, ThreeChatTurnsReuseTheirSlotsStateWithParallelSequences) { expectThreeChatTurnsReuseTheRecurrentState(2); }

}  // namespace
}  // namespace zinc::serve
