// The server over real HTTP on loopback, in process, on a model whose answer is known (see
// cycle_model.h): streamed multi-byte text arrives intact and equals the tokenizer's own decode
// of the generated ids; stop strings, usage, prefix reuse and error answers.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "graph/graph.h"
#include "model/make_model/tokenizer_meta.h"
#include "model/model.h"
#include "model/model_error.h"
#include "model/tokenizer/utf8.h"
#include "runtime/cpu/cpu_tier.h"
#include "tests/serve/cycle_model.h"
#include "tests/test_paths.h"
#include "tools/serve/api_server.h"

namespace zinc::serve {
namespace {

using nlohmann::json;

// Distinct byte tokens: an emoji (4 bytes), two CJK characters (3 bytes each) and ASCII.
constexpr const char* kCycleText = "😀中文 ok";
constexpr int kContext = 128;

struct Loaded {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
};

Loaded load(const std::string& path) {
    Loaded l;
    l.model = model::Model::load(path);
    l.graph = graph::buildDecodeGraph(l.model->config(), l.model->weights());
    runtime::TierOptions options;
    options.threads = 1;
    options.contextLength = kContext;
    l.tier = cpu::makeCpuTier(l.graph, options);
    return l;
}

// A model file served over loopback on a thread of its own until destroyed.
struct Serving {
    Serving(const std::string& path, const std::string& name, size_t queue) : loaded(load(path)) {
        ServerOptions options;
        options.port = 0;
        options.queue = queue;
        options.modelName = name;
        options.logRequests = false;
        server = std::make_unique<ApiServer>(*loaded.model, *loaded.tier, options);
        port = server->bind();
        thread = std::thread([this] { server->listen(); });
    }
    ~Serving() {
        server->stop();
        thread.join();
    }
    Loaded loaded;
    std::unique_ptr<ApiServer> server;
    int port = 0;
    std::thread thread;
};

model::TokenizerData byteLevelVocabulary(const std::string& chatTemplate) {
    model::TokenizerData t = model::builtinByteLevelTokenizer("qwen2");
    t.chatTemplate = chatTemplate;
    return t;
}

class ServeHttp : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        // A Qwen3-style template (ChatML markers and the enable_thinking switch).
        const auto data = byteLevelVocabulary(
            "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}{% if not enable_thinking %}<think>{% endif %}");
        const model::Tokenizer tokenizer(data);
        cycle_ = new std::vector<int32_t>(tokenizer.encode(kCycleText, false, false));
        const std::string path = (test::scratchDir() / "cycle.gguf").string();
        test::writeCycleModel(path, data, *cycle_, 4096);
        serving_ = new Serving(path, "cycle", 2);
        loaded_ = &serving_->loaded;
        port_ = serving_->port;
    }
    static void TearDownTestSuite() {
        delete serving_;
        delete cycle_;
    }

    const model::Tokenizer& tokenizer() const { return loaded_->model->tokenizer(); }
    // The tokenizer's own decode of the first n tokens the model says.
    std::string expectedText(size_t n) const {
        std::vector<int32_t> ids;
        for (size_t i = 0; i < n; ++i) ids.push_back((*cycle_)[i % cycle_->size()]);
        return tokenizer().decode(ids);
    }

    static httplib::Result post(const std::string& path, const std::string& body) {
        httplib::Client client("127.0.0.1", port_);
        client.set_read_timeout(60);
        return client.Post(path.c_str(), body, "application/json");
    }

    // The data lines of a server-sent event stream, "[DONE]" last.
    static std::vector<std::string> sseData(const std::string& body) {
        std::vector<std::string> events;
        size_t pos = 0;
        while (pos < body.size()) {
            const size_t end = body.find("\n\n", pos);
            EXPECT_NE(end, std::string::npos) << "unterminated event: " << body.substr(pos);
            if (end == std::string::npos) break;
            const std::string event = body.substr(pos, end - pos);
            EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
            events.push_back(event.substr(6));
            pos = end + 2;
        }
        return events;
    }

    static inline std::vector<int32_t>* cycle_ = nullptr;
    static inline Serving* serving_ = nullptr;
    static inline Loaded* loaded_ = nullptr;
    static inline int port_ = 0;
};

TEST_F(ServeHttp, ASecondServerOnAPortInUseIsRefused) {
    ServerOptions options;
    options.port = port_;
    options.queue = 1;
    options.modelName = "second";
    options.logRequests = false;
    ApiServer second(*loaded_->model, *loaded_->tier, options);
    try {
        second.bind();
        FAIL() << "a second server bound port " << port_ << ", which the first one holds";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "cannot listen on 127.0.0.1:" + std::to_string(port_) + ": Address already in use");
    }
    httplib::Client client("127.0.0.1", port_);
    const auto models = client.Get("/v1/models");
    ASSERT_TRUE(models);
    EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "cycle");
}

TEST_F(ServeHttp, HealthAndModels) {
    httplib::Client client("127.0.0.1", port_);
    auto health = client.Get("/health");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(json::parse(health->body)["status"], "ok");
    auto models = client.Get("/v1/models");
    ASSERT_TRUE(models);
    const json list = json::parse(models->body);
    EXPECT_EQ(list["object"], "list");
    ASSERT_EQ(list["data"].size(), 1u);
    EXPECT_EQ(list["data"][0]["id"], "cycle");
    EXPECT_EQ(client.Get("/v1/models/cycle")->status, 200);
    EXPECT_EQ(client.Get("/v1/models/other")->status, 404);
}

TEST_F(ServeHttp, StreamedMultiByteTextIsTheTokenizersDecode) {
    const size_t n = 3 * cycle_->size();
    auto res = post("/v1/completions", json{{"prompt", "x"}, {"max_tokens", n}, {"stream", true}, {"seed", 1}}.dump());
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
    EXPECT_TRUE(model::utf8::isValid(res->body)) << "the raw event stream split a character";
    const auto events = sseData(res->body);
    ASSERT_GE(events.size(), 2u);
    EXPECT_EQ(events.back(), "[DONE]");
    std::string text;
    std::string finish;
    for (size_t i = 0; i + 1 < events.size(); ++i) {
        const json chunk = json::parse(events[i]);
        EXPECT_EQ(chunk["object"], "text_completion");
        text += chunk["choices"][0]["text"].get<std::string>();
        if (!chunk["choices"][0]["finish_reason"].is_null()) finish = chunk["choices"][0]["finish_reason"];
    }
    EXPECT_EQ(text, expectedText(n));
    EXPECT_EQ(text, std::string(kCycleText) + kCycleText + kCycleText);
    EXPECT_EQ(finish, "length");
}

TEST_F(ServeHttp, ChatAnswerWithUsage) {
    const size_t n = 2 * cycle_->size();
    auto res = post("/v1/chat/completions",
                    json{{"model", "cycle"}, {"messages", {{{"role", "user"}, {"content", "你好"}}}}, {"max_tokens", n}}.dump());
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    const json r = json::parse(res->body);
    EXPECT_EQ(r["object"], "chat.completion");
    EXPECT_EQ(r["model"], "cycle");
    EXPECT_EQ(r["choices"][0]["message"]["role"], "assistant");
    EXPECT_EQ(r["choices"][0]["message"]["content"], expectedText(n));
    EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(r["usage"]["completion_tokens"], n);
    EXPECT_GT(r["usage"]["prompt_tokens"].get<int>(), 0);
    EXPECT_EQ(r["usage"]["total_tokens"], r["usage"]["prompt_tokens"].get<int>() + static_cast<int>(n));
}

TEST_F(ServeHttp, ACharacterCutByMaxTokensEndsInOneReplacementCharacter) {
    auto res = post("/v1/completions", json{{"prompt", "x"}, {"max_tokens", cycle_->size() + 2}}.dump());
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(json::parse(res->body)["choices"][0]["text"], std::string(kCycleText) + "\uFFFD");
}

TEST_F(ServeHttp, AStreamedStopStringNeverLeaks) {
    auto res = post("/v1/chat/completions",
                    json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 40}, {"stream", true},
                         {"stop", {"文"}}, {"stream_options", {{"include_usage", true}}}}.dump());
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    const auto events = sseData(res->body);
    ASSERT_GE(events.size(), 4u);
    EXPECT_EQ(events.back(), "[DONE]");
    const json first = json::parse(events[0]);
    EXPECT_EQ(first["object"], "chat.completion.chunk");
    EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
    std::string text;
    std::string finish;
    json usage;
    for (size_t i = 0; i + 1 < events.size(); ++i) {
        const json chunk = json::parse(events[i]);
        if (chunk.contains("usage")) usage = chunk["usage"];
        if (chunk["choices"].empty()) continue;
        text += chunk["choices"][0]["delta"].value("content", "");
        if (!chunk["choices"][0]["finish_reason"].is_null()) finish = chunk["choices"][0]["finish_reason"];
    }
    EXPECT_EQ(text, "😀中");
    EXPECT_EQ(finish, "stop");
    // The tokens of 😀 and 中, and the first byte of 文 that completed the stop string.
    const auto before = tokenizer().encode("😀中", false, false);
    EXPECT_EQ(usage["completion_tokens"].get<size_t>(), before.size() + 3);
}

TEST_F(ServeHttp, Qwen3ThinkingIsSwitchedOffPerRequest) {
    const json messages = {{{"role", "user"}, {"content", "hi"}}};
    auto promptTokens = [&](json extra) {
        json body = {{"messages", messages}, {"max_tokens", 1}};
        body.update(extra);
        auto res = post("/v1/chat/completions", body.dump());
        EXPECT_TRUE(res && res->status == 200);
        return res ? json::parse(res->body)["usage"]["prompt_tokens"].get<size_t>() : 0;
    };
    const size_t thinking = promptTokens(json::object());
    const size_t emptyThinkBlock = tokenizer().encode("<think>\n\n</think>\n\n", false, true).size();
    EXPECT_EQ(promptTokens({{"chat_template_kwargs", {{"enable_thinking", false}}}}), thinking + emptyThinkBlock);
    EXPECT_EQ(promptTokens({{"enable_thinking", false}}), thinking + emptyThinkBlock);
    EXPECT_EQ(promptTokens({{"enable_thinking", true}}), thinking);
}

TEST_F(ServeHttp, TheNextTurnReusesTheCachedPrefix) {
    const json turn1 = {{"role", "user"}, {"content", "first question"}};
    auto first = post("/v1/chat/completions", json{{"messages", {turn1}}, {"max_tokens", 4}}.dump());
    ASSERT_TRUE(first);
    const json a = json::parse(first->body);
    const json answer = {{"role", "assistant"}, {"content", a["choices"][0]["message"]["content"]}};
    const json turn2 = {{"role", "user"}, {"content", "and a second one"}};
    auto second = post("/v1/chat/completions", json{{"messages", {turn1, answer, turn2}}, {"max_tokens", 4}}.dump());
    ASSERT_TRUE(second);
    const json b = json::parse(second->body);
    EXPECT_GE(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), a["usage"]["prompt_tokens"].get<int>());
    EXPECT_LT(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), b["usage"]["prompt_tokens"].get<int>());
}

void expectError(const httplib::Result& res, int status, const std::string& messagePart, const json& param = nullptr,
                 const json& code = nullptr) {
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, status) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    const json e = json::parse(res->body);
    ASSERT_TRUE(e.contains("error")) << res->body;
    EXPECT_NE(e["error"]["message"].get<std::string>().find(messagePart), std::string::npos) << res->body;
    EXPECT_TRUE(e["error"]["type"].is_string());
    EXPECT_EQ(e["error"]["param"], param) << res->body;
    EXPECT_EQ(e["error"]["code"], code) << res->body;
}

TEST_F(ServeHttp, ErrorsComeInOpenAisShape) {
    expectError(post("/v1/chat/completions", "{\"messages\": ["), 400, "could not parse the JSON body");
    expectError(post("/v1/chat/completions", R"({"model":"gpt-4","messages":[{"role":"user","content":"x"}]})"), 404,
                "'gpt-4' does not exist", "model", "model_not_found");
    expectError(post("/v1/completions", json{{"prompt", std::string(300, 'a')}}.dump()), 400,
                "maximum context length is 128 tokens", "prompt", "context_length_exceeded");
    expectError(post("/v1/completions", R"({"prompt":"x","logit_bias":{"100000":1}})"), 400, "vocabulary", "logit_bias");
    expectError(post("/v1/completions", R"({"prompt":[5,100000]})"), 400, "outside the vocabulary", "prompt");
    expectError(post("/v1/completions", R"({"prompt":"x","temperature":9})"), 400, "temperature", "temperature");
    expectError(post("/v1/embeddings", "{}"), 404, "Unknown request URL: POST /v1/embeddings");
}

TEST(ServeTemplate, AnUnknownChatTemplateIsAClearErrorUnlessOneIsChosen) {
    const auto data = byteLevelVocabulary("{{ weird_template_without_markers }}");
    const std::string path = (test::scratchDir() / "cycle-unknown-template.gguf").string();
    test::writeCycleModel(path, data, {5, 6}, 256);
    Loaded l = load(path);
    ServerOptions options;
    options.modelName = "m";
    try {
        ApiServer server(*l.model, *l.tier, options);
        ADD_FAILURE() << "an unknown template was accepted";
    } catch (const model::ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("unsupported chat template (starts with: {{ weird_template"), std::string::npos)
            << e.what();
    }
    options.templateName = "chatml";
    EXPECT_NO_THROW(ApiServer(*l.model, *l.tier, options));
}

}  // namespace
}  // namespace zinc::serve

namespace zinc::serve {
namespace {

TEST_F(ServeHttp, OperationsEndpoints) {
    httplib::Client client("127.0.0.1", port_);
    // Empty and non-JSON bodies.
    expectError(post("/v1/chat/completions", ""), 400, "the request body is empty: send a JSON object");
    expectError(post("/v1/chat/completions", "hello"), 400, "could not parse the JSON body of the request");
    // A known URL with the wrong method.
    auto wrong = client.Get("/v1/chat/completions");
    expectError(wrong, 405, "Method GET is not allowed for /v1/chat/completions: use POST", nullptr, "method_not_allowed");
    EXPECT_EQ(wrong->get_header_value("Allow"), "POST");
    // A POST with no body at all (no Content-Length), and one to a GET route.
    expectError(client.Post("/v1/chat/completions"), 400, "the request body is empty: send a JSON object");
    expectError(client.Post("/api/tags"), 405, "Method POST is not allowed for /api/tags: use GET", nullptr, "method_not_allowed");
    // A preflight; no CORS headers unless --cors names the origin.
    auto preflight = client.Options("/v1/chat/completions", {{"Origin", "http://example.com"}});
    ASSERT_TRUE(preflight);
    EXPECT_EQ(preflight->status, 204);
    EXPECT_EQ(preflight->get_header_value("Allow"), "POST, OPTIONS");
    EXPECT_FALSE(preflight->has_header("Access-Control-Allow-Origin"));
    // Tokenize and back.
    auto tokens = post("/v1/tokenize", R"({"content":"😀中文 ok"})");
    ASSERT_TRUE(tokens);
    ASSERT_EQ(tokens->status, 200) << tokens->body;
    const json ids = json::parse(tokens->body)["tokens"];
    EXPECT_EQ(ids.get<std::vector<int32_t>>(), tokenizer().encode("😀中文 ok", false, true));
    auto text = post("/v1/detokenize", json{{"tokens", ids}}.dump());
    ASSERT_TRUE(text);
    EXPECT_EQ(json::parse(text->body)["content"], "😀中文 ok");
    expectError(post("/v1/detokenize", R"({"tokens":[99999999]})"), 400, "token ids below", "tokens");
    expectError(post("/v1/tokenize", R"({"content":"x","add_special":"yes"})"), 400, "invalid request body");
    auto ollama = post("/api/chat", R"({"messages":[{"role":5}]})");
    ASSERT_TRUE(ollama);
    EXPECT_EQ(ollama->status, 400);
    EXPECT_NE(json::parse(ollama->body)["error"].get<std::string>().find("invalid request body"), std::string::npos) << ollama->body;
    // The chat page.
    auto page = client.Get("/");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
    EXPECT_NE(page->body.find("<title>zinc-rt chat</title>"), std::string::npos);
    // Metrics count what was answered.
    auto metrics = client.Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4");
    EXPECT_NE(metrics->body.find("zinc_requests_total{route=\"/v1/chat/completions\",status=\"405\"} 1"), std::string::npos)
        << metrics->body;
    EXPECT_NE(metrics->body.find("# TYPE zinc_time_to_first_token_seconds histogram"), std::string::npos);
}

// A Qwen3-style model that thinks: its cycle is "<think>", "r", "</think>", "o", "k", with the
// tags as tokens of their own (as in Qwen3's vocabulary).
class ServeReasoning : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        model::TokenizerData data = model::builtinByteLevelTokenizer("qwen2");
        data.chatTemplate = "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}{% if not enable_thinking %}<think>{% endif %}";
        if (data.tokenTypes.empty()) data.tokenTypes.assign(data.tokens.size(), 1);
        for (const char* tag : {"<think>", "</think>"}) {
            data.tokens.push_back(tag);
            data.tokenTypes.push_back(static_cast<int32_t>(model::TokenType::UserDefined));
            if (!data.scores.empty()) data.scores.push_back(0);
        }
        const model::Tokenizer tokenizer(data);
        const std::vector<int32_t> cycle = {tokenizer.findToken("<think>"), tokenizer.encode("r", false, false)[0],
                                            tokenizer.findToken("</think>"), tokenizer.encode("o", false, false)[0],
                                            tokenizer.encode("k", false, false)[0]};
        const std::string path = (test::scratchDir() / "cycle-think.gguf").string();
        test::writeCycleModel(path, data, cycle, 4096);
        serving_ = new Serving(path, "thinker", 4);
        port_ = serving_->port;
    }
    static void TearDownTestSuite() { delete serving_; }
    static json chat(json extra) {
        json body = {{"messages", {{{"role", "user"}, {"content", "2+2?"}}}}, {"max_tokens", 5}};
        body.update(extra);
        httplib::Client client("127.0.0.1", port_);
        client.set_read_timeout(60);
        auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
        EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
        return res ? json::parse(res->body) : json();
    }
    static inline Serving* serving_ = nullptr;
    static inline int port_ = 0;
};

TEST_F(ServeReasoning, ThinkingIsReasoningContent) {
    const json r = chat(json::object());
    EXPECT_EQ(r["choices"][0]["message"]["reasoning_content"], "r");
    EXPECT_EQ(r["choices"][0]["message"]["content"], "ok");
}

TEST_F(ServeReasoning, ReasoningFormatNoneKeepsItInline) {
    const json r = chat({{"reasoning_format", "none"}});
    EXPECT_FALSE(r["choices"][0]["message"].contains("reasoning_content"));
    EXPECT_EQ(r["choices"][0]["message"]["content"], "<think>r</think>ok");
}

TEST_F(ServeReasoning, StreamedAsDeltaReasoningContent) {
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Post("/v1/chat/completions",
                           json{{"messages", {{{"role", "user"}, {"content", "2+2?"}}}}, {"max_tokens", 5}, {"stream", true}}.dump(),
                           "application/json");
    ASSERT_TRUE(res);
    std::string reasoning, content;
    for (size_t pos = 0, end; (end = res->body.find("\n\n", pos)) != std::string::npos; pos = end + 2) {
        const std::string data = res->body.substr(pos + 6, end - pos - 6);  // after "data: "
        if (data == "[DONE]") continue;
        const json delta = json::parse(data)["choices"][0]["delta"];
        reasoning += delta.value("reasoning_content", "");
        content += delta.value("content", "");
    }
    EXPECT_EQ(reasoning, "r");
    EXPECT_EQ(content, "ok");
}

}  // namespace
}  // namespace zinc::serve
