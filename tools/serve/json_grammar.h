#pragma once
// A JSON Schema compiled into the grammar that structured output is sampled under
// (response_format json_object / json_schema, strict tool arguments). Each schema becomes a
// node: an object with its properties in order, an array of items, a string, a number, a set
// of literal values (enum, const, true/false, null), or a union. JsonMatcher walks the nodes
// one byte at a time; the engine asks it which tokens may come next.
//
// What is enforced: type (one or several), properties, required, additionalProperties,
// items, minItems/maxItems, minLength/maxLength, enum, const, anyOf/oneOf, $ref into $defs /
// definitions, nesting and recursion. Output is compact JSON (no whitespace between tokens),
// properties in the order the schema lists them (optional ones may be left out). Keywords a
// token mask cannot enforce here (pattern, format, minimum other than 0, multipleOf,
// uniqueItems, ...) are refused with GrammarError rather than ignored.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace zinc::serve {

// A schema the grammar cannot be built from; the message names the schema path.
class GrammarError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline constexpr int32_t kUnbounded = INT32_MAX;

struct SchemaNode {
    enum class Kind { Any, Object, FreeObject, Array, String, Number, Integer, Literals, Union };
    struct Property {
        std::string quotedKey;  // "\"name\"", as it is written
        const SchemaNode* value = nullptr;
        bool required = false;
    };

    Kind kind = Kind::Any;
    std::vector<Property> properties;         // Object
    const SchemaNode* element = nullptr;      // FreeObject values, Array items
    int32_t minCount = 0;                     // Array items, String characters
    int32_t maxCount = kUnbounded;
    bool nonNegative = false;                 // Number, Integer: "minimum": 0
    std::vector<std::string> literals;        // Literals: compact JSON texts (at most 64)
    std::vector<const SchemaNode*> alternatives;  // Union: the first that can start with a byte wins,
    // unless every alternative is an object whose first property is a required constant
    // (tool calls: {"name": "f", "arguments": ...}): then `prefixes` holds each one's fixed
    // start, e.g. {"name":"f" — they differ, and the text picks the alternative.
    std::vector<std::string> prefixes;

    // Bytes of the shortest text this node accepts (kUnbounded: none is finite).
    int32_t minLength = kUnbounded;
};

class JsonGrammar {
public:
    // response_format {"type": "json_schema"}: throws GrammarError naming what it cannot enforce.
    static std::shared_ptr<const JsonGrammar> fromSchema(const nlohmann::ordered_json& schema);
    // response_format {"type": "json_object"}: any JSON object.
    static std::shared_ptr<const JsonGrammar> anyObject();

    const SchemaNode* root() const { return root_; }
    // Literal text around the value: a tool call's "<tool_call>\n{...}\n</tool_call>" framing.
    std::string prefix, suffix;
    // Non-empty: the grammar applies only after the text says this (a tool call opening in an
    // otherwise free answer), until the match is complete; then it waits for the next one.
    std::string trigger;

    // Copies sharing the nodes, with a prefix and suffix (and a trigger).
    std::shared_ptr<const JsonGrammar> framed(std::string prefix, std::string suffix, std::string trigger = {}) const;

private:
    friend class SchemaCompiler;
    std::shared_ptr<std::vector<std::unique_ptr<SchemaNode>>> nodes_ = std::make_shared<std::vector<std::unique_ptr<SchemaNode>>>();
    const SchemaNode* root_ = nullptr;
};

}  // namespace zinc::serve
