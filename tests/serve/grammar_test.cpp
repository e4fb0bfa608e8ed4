// Structured output's grammar: schemas compile (or are refused naming the keyword), the matcher
// accepts exactly the texts the schema allows, and a random walk over the tokens the mask
// allows always ends in JSON that validates, inside its token budget.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "model/make_model/tokenizer_meta.h"
#include "tools/serve/api_error.h"
#include "tools/serve/grammar_constraint.h"
#include "tools/serve/json_grammar.h"
#include "tools/serve/json_matcher.h"
#include "tools/serve/openai_request.h"
#include "tools/serve/tool_prompt.h"

namespace zinc::serve {
namespace {

using json = nlohmann::ordered_json;  // schemas keep the order of their properties

// The subset of JSON Schema the grammar enforces, checked independently of it.
bool validates(const json& v, const json& s, const json& root) {
    if (s.is_boolean()) return s.get<bool>();
    if (s.contains("$ref")) {
        const std::string ref = s["$ref"];
        return validates(v, ref == "#" ? root : root["$defs"][ref.substr(8)], root);
    }
    if (s.contains("const")) return v == s["const"];
    if (s.contains("enum")) return std::find(s["enum"].begin(), s["enum"].end(), v) != s["enum"].end();
    if (s.contains("anyOf")) {
        for (const json& alt : s["anyOf"])
            if (validates(v, alt, root)) return true;
        return false;
    }
    if (!s.contains("type")) return true;
    if (s["type"].is_array()) {
        for (const json& t : s["type"]) {
            json one = s;
            one["type"] = t;
            if (validates(v, one, root)) return true;
        }
        return false;
    }
    const std::string type = s["type"];
    if (type == "null") return v.is_null();
    if (type == "boolean") return v.is_boolean();
    if (type == "integer") return v.is_number_integer() && (!s.contains("minimum") || v.get<int64_t>() >= 0);
    if (type == "number") return v.is_number() && (!s.contains("minimum") || v.get<double>() >= 0);
    if (type == "string") {
        if (!v.is_string()) return false;
        const std::string str = v;
        size_t chars = 0;
        for (unsigned char c : str) chars += (c & 0xC0) != 0x80;
        return chars >= s.value("minLength", 0u) && chars <= s.value("maxLength", 1u << 30);
    }
    if (type == "array") {
        if (!v.is_array() || v.size() < s.value("minItems", 0u) || v.size() > s.value("maxItems", 1u << 30)) return false;
        for (const json& item : v)
            if (s.contains("items") && !validates(item, s["items"], root)) return false;
        return true;
    }
    if (type == "object") {
        if (!v.is_object()) return false;
        for (const json& name : s.value("required", json::array()))
            if (!v.contains(name.get<std::string>())) return false;
        for (const auto& [key, value] : v.items()) {
            if (s.contains("properties") && s["properties"].contains(key)) {
                if (!validates(value, s["properties"][key], root)) return false;
            } else if (s.contains("additionalProperties") && !validates(value, s["additionalProperties"], root)) {
                return false;
            }
        }
        return true;
    }
    return false;
}

bool accepts(const json& schema, const std::string& text) {
    JsonMatcher m(JsonGrammar::fromSchema(schema));
    return m.feed(text) && m.complete();
}

const json kPerson = json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 12},
    "age": {"type": "integer", "minimum": 0},
    "mood": {"enum": ["happy", "sad", 3, null]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "minItems": 1, "maxItems": 3},
    "score": {"type": ["number", "null"]},
    "home": {"$ref": "#/$defs/place"},
    "ok": {"type": "boolean"}
  },
  "required": ["name", "age", "tags", "home"],
  "additionalProperties": false,
  "$defs": {"place": {"type": "object", "properties": {"city": {"type": "string"}, "near": {"$ref": "#/$defs/place"}},
                       "required": ["city"]}}
})");

TEST(JsonGrammar, AcceptsWhatTheSchemaAllows) {
    EXPECT_TRUE(accepts(kPerson, R"({"name":"Ann","age":7,"tags":["a"],"home":{"city":"Oslo"}})"));
    EXPECT_TRUE(accepts(kPerson, R"({"name":"Ann","age":0,"mood":3,"tags":["a","bb"],"score":-1.5,)"
                                 R"("home":{"city":"\u00e9\n","near":{"city":"x"}},"ok":false})"));
    EXPECT_TRUE(accepts(kPerson, R"({"name":"中文","age":7,"mood":null,"tags":["a"],"score":null,"home":{"city":""}})"));
}

TEST(JsonGrammar, RefusesWhatItDoesNot) {
    EXPECT_FALSE(accepts(kPerson, R"({"age":7,"name":"Ann","tags":["a"],"home":{"city":"Oslo"}})"));  // order
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","tags":["a"],"home":{"city":"Oslo"}})"));  // required age
    EXPECT_FALSE(accepts(kPerson, R"({"name":"","age":7,"tags":["a"],"home":{"city":"Oslo"}})"));  // minLength
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","age":-7,"tags":["a"],"home":{"city":"Oslo"}})"));  // minimum 0
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","age":7.5,"tags":["a"],"home":{"city":"Oslo"}})"));  // integer
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","age":7,"tags":[],"home":{"city":"Oslo"}})"));  // minItems
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","age":7,"tags":["toolong"],"home":{"city":"Oslo"}})"));
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","age":7,"tags":["a"],"home":{"city":"Oslo"},"x":1})"));
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","age":7,"mood":"glad","tags":["a"],"home":{"city":"O"}})"));
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","age":07,"tags":["a"],"home":{"city":"Oslo"}})"));
    EXPECT_FALSE(accepts(kPerson, R"({"name":"A)" "\n" R"(","age":7,"tags":["a"],"home":{"city":"Oslo"}})"));
    EXPECT_FALSE(accepts(kPerson, R"({"name":"Ann","age":7,"tags":["a"],"home":{"city":"Oslo"}} )"));
    EXPECT_FALSE(accepts(json{{"type", "object"}}, "[]"));
    EXPECT_TRUE(accepts(json{{"type", "object"}}, R"({"a":[1,{"b":null}],"c":"d","e":-0.5})"));
    EXPECT_TRUE(accepts(json{{"type", "integer"}}, "120"));
}

TEST(JsonGrammar, UnsupportedKeywordsAreRefusedNamingThem) {
    auto refused = [](const json& schema) {
        try {
            compileSchema(schema, "response_format.json_schema.schema");
        } catch (const ApiError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(refused(json::parse(R"({"type":"object","properties":{"d":{"type":"string","format":"date"}}})")),
              "'response_format.json_schema.schema': schema.properties.d.format is not supported by structured output "
              "(the grammar cannot enforce it)");
    EXPECT_EQ(refused(json::parse(R"({"type":"integer","minimum":5})")),
              "'response_format.json_schema.schema': schema.minimum is supported only as 0");
    EXPECT_EQ(refused(json::parse(R"({"$ref":"#/$defs/nope"})")),
              "'response_format.json_schema.schema': schema.$ref '#/$defs/nope' does not name a schema under #/$defs "
              "or #/definitions");
    EXPECT_EQ(refused(json::parse(R"({"$defs":{"a":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},)"
                                  R"("required":["a"]}},"$ref":"#/$defs/a"})")),
              "'response_format.json_schema.schema': schema has no finite instance (a required property recurses forever)");
}

TEST(JsonGrammar, ShortestCompletionCountsEveryClosingByte) {
    JsonMatcher m(JsonGrammar::fromSchema(kPerson));
    EXPECT_EQ(m.shortestCompletion(), static_cast<int32_t>(std::string(R"({"name":"a","age":0,"tags":[""],"home":{"city":""}})").size()));
    ASSERT_TRUE(m.feed(R"({"name":"Ann","age":7,"tags":["a")"));
    EXPECT_EQ(m.shortestCompletion(), static_cast<int32_t>(std::string(R"(],"home":{"city":""}})").size()));
}

// Random walks over the allowed tokens of a byte-level vocabulary with merges: every walk ends
// in text that parses and validates, within the budget.
TEST(GrammarConstraint, RandomWalksAlwaysEndInValidJsonWithinTheBudget) {
    const model::Tokenizer tokenizer(model::builtinByteLevelTokenizer("qwen2"));
    auto pieces = std::make_shared<TokenPieces>(tokenizer);
    const json freeObject = {{"type", "object"}};
    for (const json& schema : {kPerson, freeObject}) {
        for (uint32_t seed = 0; seed < 40; ++seed) {
            std::mt19937 rng(seed);
            const int32_t budget = 60 + static_cast<int32_t>(seed);
            GrammarConstraint constraint(JsonGrammar::fromSchema(schema), pieces);
            std::string text;
            bool ended = false;
            for (int32_t i = 0; i < budget && !ended; ++i) {
                const auto ids = constraint.allowed(budget - i);
                if (ids.empty()) break;  // complete, and this vocabulary has no end-of-generation token
                const int32_t id = ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)];
                if (tokenizer.isEndOfGeneration(id)) {
                    ended = true;
                } else {
                    text += pieces->piece(id);
                    constraint.accept(id);
                }
            }
            json value;
            ASSERT_NO_THROW(value = json::parse(text)) << "seed " << seed << ": " << text;
            EXPECT_TRUE(validates(value, schema, schema)) << "seed " << seed << ": " << text;
        }
    }
}

ToolRequest weatherAndTime(ToolChoice choice) {
    ToolRequest tools;
    tools.choice = choice;
    tools.tools.push_back({"get_weather", "", json::parse(R"({"type":"object","properties":{"city":{"type":"string",
        "maxLength":8},"unit":{"enum":["C","F"]}},"required":["city","unit"],"additionalProperties":false})"), true});
    tools.tools.push_back({"get_time", "", json::parse(R"({"type":"object","properties":{"zone":{"type":"integer"}},
        "required":["zone"],"additionalProperties":false})"), true});
    return tools;
}

// Picks random allowed tokens until the grammar ends or the budget is spent; the text.
std::string randomWalk(GrammarConstraint& constraint, const TokenPieces& pieces, uint32_t seed, int32_t budget) {
    std::mt19937 rng(seed);
    std::string text;
    for (int32_t i = 0; i < budget; ++i) {
        const auto ids = constraint.allowed(budget - i);
        if (ids.empty()) break;
        const int32_t id = ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)];
        if (pieces.piece(id).empty()) break;  // end of generation
        text += pieces.piece(id);
        constraint.accept(id);
    }
    return text;
}

// "required" over two functions: the name, written first, picks which arguments' schema applies.
TEST(ToolCallGrammar, TheNamePicksTheArgumentsSchema) {
    const model::Tokenizer tokenizer(model::builtinByteLevelTokenizer("qwen2"));
    auto pieces = std::make_shared<TokenPieces>(tokenizer);
    const ToolRequest tools = weatherAndTime(ToolChoice::Required);
    std::set<std::string> names;
    for (uint32_t seed = 0; seed < 30; ++seed) {
        GrammarConstraint constraint(toolCallGrammar(model::ChatTemplateFamily::Qwen3, tools), pieces);
        const std::string text = randomWalk(constraint, *pieces, seed, 120);
        ASSERT_EQ(text.rfind("<tool_call>\n{\"name\":\"", 0), 0u) << text;
        ASSERT_GE(text.size(), 13u);
        ASSERT_EQ(text.substr(text.size() - 13), "\n</tool_call>") << text;
        const json call = json::parse(text.substr(12, text.size() - 25));
        const std::string name = call["name"];
        names.insert(name);
        const json& schema = tools.tools[name == "get_weather" ? 0 : 1].parameters;
        EXPECT_TRUE(validates(call["arguments"], schema, schema)) << text;
    }
    EXPECT_EQ(names.size(), 2u);
}

// Auto with strict functions: free text until the model writes <tool_call>, then the grammar
// until the call closes, then free again.
TEST(ToolCallGrammar, StrictArgumentsInAFreeAnswerStartAtTheTrigger) {
    const model::Tokenizer tokenizer(model::builtinByteLevelTokenizer("qwen2"));
    auto pieces = std::make_shared<TokenPieces>(tokenizer);
    GrammarConstraint constraint(toolCallGrammar(model::ChatTemplateFamily::Qwen3, weatherAndTime(ToolChoice::Auto)), pieces);
    std::vector<float> logits(pieces->size(), 0.0f);
    EXPECT_EQ(constraint.mask(logits, 100), logits.size());
    EXPECT_EQ(std::count(logits.begin(), logits.end(), 0.0f), static_cast<ptrdiff_t>(logits.size()));
    for (int32_t id : tokenizer.encode("Let me check. <tool_", false, false)) constraint.accept(id);
    EXPECT_EQ(constraint.mask(logits, 100), logits.size()) << "not yet";
    for (int32_t id : tokenizer.encode("call>", false, false)) constraint.accept(id);
    EXPECT_LT(constraint.mask(logits, 100), logits.size());
    for (int32_t id : constraint.allowed(100)) EXPECT_EQ(pieces->piece(id)[0], '\n');
    const std::string call = randomWalk(constraint, *pieces, 7, 100);
    ASSERT_GE(call.size(), 13u);
    EXPECT_EQ(call.substr(call.size() - 13), "\n</tool_call>") << call;
    std::fill(logits.begin(), logits.end(), 0.0f);
    EXPECT_EQ(constraint.mask(logits, 100), logits.size()) << "free again after the call";
}

}  // namespace
}  // namespace zinc::serve
