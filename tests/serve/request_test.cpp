// OpenAI request bodies -> structs: what is accepted, what is refused (400 naming the field).
#include <gtest/gtest.h>

#include "tools/serve/api_error.h"
#include "tools/serve/openai_request.h"

namespace zinc::serve {
namespace {

// The ApiError a body gets, or a failure when it parses.
template <class Parse>
ApiError refusal(Parse parse, std::string_view body) {
    try {
        parse(body, runtime::SamplerParams{});
    } catch (const ApiError& e) {
        return e;
    }
    ADD_FAILURE() << "accepted: " << body;
    return ApiError(0, "");
}
ApiError chatRefusal(std::string_view body) { return refusal(parseChatRequest, body); }
ApiError completionRefusal(std::string_view body) { return refusal(parseCompletionRequest, body); }

constexpr const char* kHello = R"({"model":"m","messages":[{"role":"user","content":"hi"}])";
std::string chatWith(const std::string& fields) { return std::string(kHello) + "," + fields + "}"; }

TEST(ChatRequest, MinimalRequestTakesTheServerDefaults) {
    runtime::SamplerParams defaults;
    defaults.temperature = 0.3f;
    defaults.topK = 7;
    const ChatRequest r = parseChatRequest(std::string(kHello) + "}", defaults);
    EXPECT_EQ(r.params.model, "m");
    ASSERT_EQ(r.messages.size(), 1u);
    EXPECT_EQ(r.messages[0].role, "user");
    EXPECT_EQ(r.messages[0].content, "hi");
    EXPECT_FALSE(r.params.stream);
    EXPECT_FALSE(r.params.maxTokens.has_value());
    EXPECT_FALSE(r.params.seed.has_value());
    EXPECT_FLOAT_EQ(r.params.sampling.temperature, 0.3f);
    EXPECT_EQ(r.params.sampling.topK, 7);
    EXPECT_TRUE(r.params.stop.empty());
    EXPECT_FALSE(r.enableThinking.has_value());
}

TEST(ChatRequest, ReadsEverySamplingField) {
    const ChatRequest r = parseChatRequest(chatWith(
        R"("stream":true,"stream_options":{"include_usage":true},"max_tokens":12,"stop":["a","bc"],)"
        R"("temperature":0.5,"top_p":0.9,"top_k":20,"min_p":0.1,"repetition_penalty":1.2,"repeat_last_n":32,)"
        R"("seed":-1,"logit_bias":{"17":-100,"3":2.5},"frequency_penalty":0,"presence_penalty":0,"n":1)"));
    EXPECT_TRUE(r.params.stream);
    EXPECT_TRUE(r.params.includeUsage);
    EXPECT_EQ(r.params.maxTokens, 12);
    EXPECT_EQ(r.params.stop, (std::vector<std::string>{"a", "bc"}));
    EXPECT_FLOAT_EQ(r.params.sampling.temperature, 0.5f);
    EXPECT_FLOAT_EQ(r.params.sampling.topP, 0.9f);
    EXPECT_EQ(r.params.sampling.topK, 20);
    EXPECT_FLOAT_EQ(r.params.sampling.minP, 0.1f);
    EXPECT_FLOAT_EQ(r.params.sampling.repeatPenalty, 1.2f);
    EXPECT_EQ(r.params.sampling.repeatLastN, 32);
    EXPECT_EQ(r.params.seed, UINT64_MAX);
    ASSERT_EQ(r.params.logitBias.size(), 2u);
    EXPECT_EQ(r.params.logitBias[0], (std::pair<int32_t, float>{17, -100.0f}));
    EXPECT_EQ(r.params.logitBias[1], (std::pair<int32_t, float>{3, 2.5f}));
}

TEST(ChatRequest, AliasesAndNullsMeanWhatClientsExpect) {
    const ChatRequest r = parseChatRequest(chatWith(
        R"("max_completion_tokens":5,"max_tokens":9,"repeat_penalty":1.5,"stop":"\n\n","temperature":null,)"
        R"("chat_template_kwargs":{"enable_thinking":false})"));
    EXPECT_EQ(r.params.maxTokens, 5);  // the newer name wins
    EXPECT_FLOAT_EQ(r.params.sampling.repeatPenalty, 1.5f);
    EXPECT_EQ(r.params.stop, (std::vector<std::string>{"\n\n"}));
    EXPECT_FLOAT_EQ(r.params.sampling.temperature, runtime::SamplerParams{}.temperature);
    EXPECT_EQ(r.enableThinking, false);
}

TEST(ChatRequest, MessagesTakeTextPartsAndTheDeveloperRole) {
    const ChatRequest r = parseChatRequest(
        R"({"messages":[{"role":"developer","content":"be brief"},)"
        R"({"role":"user","content":[{"type":"text","text":"你好 "},{"type":"text","text":"😀"}]},)"
        R"({"role":"assistant","content":null},{"role":"user","content":"again"}]})");
    ASSERT_EQ(r.messages.size(), 4u);
    EXPECT_EQ(r.messages[0].role, "system");
    EXPECT_EQ(r.messages[1].content, "你好 😀");
    EXPECT_EQ(r.messages[2].content, "");
    EXPECT_EQ(r.params.model, "");
}

TEST(ChatRequest, MalformedJsonIsRefused) {
    EXPECT_NE(std::string(chatRefusal(" \n").what()).find("the request body is empty: send a JSON object"), std::string::npos);
    for (const char* body : {"{", R"({"messages":[}")", "not json", "{\"a\":1}}"}) {
        const ApiError e = chatRefusal(body);
        EXPECT_EQ(e.status(), 400) << body;
        EXPECT_EQ(e.type(), "invalid_request_error");
        EXPECT_NE(std::string(e.what()).find("could not parse the JSON body"), std::string::npos) << e.what();
    }
    EXPECT_NE(std::string(chatRefusal("[1,2]").what()).find("must be a JSON object"), std::string::npos);
    EXPECT_NE(std::string(chatRefusal("{\"messages\":\"\xC3\x28\"}").what()).find("could not parse"), std::string::npos)
        << "invalid UTF-8 inside a string";
}

TEST(ChatRequest, DeepNestingIsRefusedBeforeItIsBuilt) {
    const std::string deep = std::string(10000, '[') + std::string(10000, ']');
    EXPECT_NE(std::string(chatRefusal(deep).what()).find("nested deeper than"), std::string::npos);
}

TEST(ChatRequest, EachBadFieldIsNamed) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"model":"m"})", "messages"},
        {R"({"messages":[]})", "messages"},
        {R"({"messages":[{"role":"robot","content":"x"}]})", "messages[0].role"},
        {R"({"messages":[{"role":"user"}]})", "messages[0].content"},
        {R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]})", "messages[0].content"},
        {chatWith(R"("temperature":3)"), "temperature"},
        {chatWith(R"("temperature":"hot")"), "temperature"},
        {chatWith(R"("top_p":1.5)"), "top_p"},
        {chatWith(R"("top_k":-1)"), "top_k"},
        {chatWith(R"("top_k":2.5)"), "top_k"},
        {chatWith(R"("min_p":-0.1)"), "min_p"},
        {chatWith(R"("max_tokens":0)"), "max_tokens"},
        {chatWith(R"("max_tokens":99999999999)"), "max_tokens"},
        {chatWith(R"("stop":"")"), "stop"},
        {chatWith(R"("stop":[1])"), "stop"},
        {chatWith(R"("stop":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"])"), "stop"},
        {chatWith(R"("stream":"yes")"), "stream"},
        {chatWith(R"("seed":1.5)"), "seed"},
        {chatWith(R"("logit_bias":{"x":1})"), "logit_bias"},
        {chatWith(R"("logit_bias":{"5":101})"), "logit_bias"},
        {chatWith(R"("n":2)"), "n"},
        {chatWith(R"("frequency_penalty":0.5)"), "frequency_penalty"},
        {chatWith(R"("logprobs":true)"), "logprobs"},
        {chatWith(R"("tools":[{"type":"x"}])"), "tools[0]"},
        {chatWith(R"("tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"always")"), "tool_choice"},
        {chatWith(R"("tool_choice":{"type":"function","function":{"name":"g"}})"), "tool_choice"},
        {chatWith(R"("functions":[])"), "functions"},
        {chatWith(R"("reasoning_format":"xml")"), "reasoning_format"},
        {chatWith(R"("response_format":{"type":"xml"})"), "response_format.type"},
        {chatWith(R"("response_format":{"type":"json_schema","json_schema":{}})"), "response_format.json_schema.schema"},
        {chatWith(R"("response_format":{"type":"json_schema","json_schema":{"schema":{"type":"string","pattern":"a+"}}})"),
         "response_format.json_schema.schema"},
        {chatWith(R"("stream_options":{"include_usage":1})"), "stream_options.include_usage"},
    };
    for (const auto& [body, param] : cases) {
        const ApiError e = chatRefusal(body);
        EXPECT_EQ(e.status(), 400) << body;
        EXPECT_EQ(e.param(), param) << body << " -> " << e.what();
        EXPECT_NE(std::string(e.what()).find(param), std::string::npos) << e.what();
    }
}

TEST(CompletionRequest, PromptAsTextOrTokenIds) {
    EXPECT_EQ(parseCompletionRequest(R"({"prompt":"Once upon"})").prompt, "Once upon");
    EXPECT_EQ(parseCompletionRequest(R"({"prompt":["Once upon"]})").prompt, "Once upon");
    const CompletionRequest ids = parseCompletionRequest(R"({"prompt":[1,403,407],"max_tokens":3})");
    EXPECT_TRUE(ids.promptIsTokens);
    EXPECT_EQ(ids.promptTokens, (std::vector<int32_t>{1, 403, 407}));
    EXPECT_EQ(ids.params.maxTokens, 3);
}

TEST(CompletionRequest, UnsupportedOrMissingPromptIsRefused) {
    for (const char* body : {R"({})", R"({"prompt":""})", R"({"prompt":[]})", R"({"prompt":["a","b"]})",
                             R"({"prompt":[1,-2]})", R"({"prompt":{"text":"a"}})"}) {
        EXPECT_EQ(completionRefusal(body).param(), "prompt") << body;
    }
    EXPECT_EQ(completionRefusal(R"({"prompt":"a","echo":true})").param(), "echo");
    EXPECT_EQ(completionRefusal(R"({"prompt":"a","suffix":"b"})").param(), "suffix");
    EXPECT_EQ(completionRefusal(R"({"prompt":"a","best_of":2})").param(), "best_of");
}

}  // namespace
}  // namespace zinc::serve
