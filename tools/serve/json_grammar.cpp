#include "tools/serve/json_grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace zinc::serve {

using json = nlohmann::ordered_json;

namespace {

constexpr size_t kMaxLiterals = 64;    // a literal set is matched with a 64-bit mask
constexpr size_t kMaxProperties = 64;  // so is the choice of the next property key
constexpr int kMaxDepth = 64;

int32_t saturatingAdd(int64_t a, int64_t b) { return static_cast<int32_t>(std::min<int64_t>(a + b, kUnbounded)); }

}  // namespace

class SchemaCompiler {
public:
    explicit SchemaCompiler(const json& root, JsonGrammar& grammar) : root_(root), grammar_(grammar) {}

    const SchemaNode* compile(const json& schema, const std::string& path, int depth) {
        if (depth > kMaxDepth) fail(path, fmt::format("nests deeper than {} levels", kMaxDepth));
        if (schema.is_boolean()) {
            if (!schema.get<bool>()) fail(path, "is false: no value can match it");
            return any();
        }
        if (!schema.is_object()) fail(path, "must be an object or a boolean");
        if (const auto ref = schema.find("$ref"); ref != schema.end()) return reference(*ref, path, depth);
        for (const auto& [key, value] : schema.items()) checkKeyword(key, value, path);
        if (const auto c = schema.find("const"); c != schema.end()) return literals({*c}, path);
        if (const auto e = schema.find("enum"); e != schema.end()) {
            if (!e->is_array() || e->empty()) fail(path + ".enum", "must be a non-empty array");
            return literals(*e, path + ".enum");
        }
        for (const char* keyword : {"anyOf", "oneOf"}) {
            if (const auto alts = schema.find(keyword); alts != schema.end()) {
                if (!alts->is_array() || alts->empty()) fail(path + "." + keyword, "must be a non-empty array");
                SchemaNode* node = add(SchemaNode::Kind::Union);
                for (size_t i = 0; i < alts->size(); ++i)
                    node->alternatives.push_back(compile((*alts)[i], fmt::format("{}.{}[{}]", path, keyword, i), depth + 1));
                return node;
            }
        }
        if (const auto all = schema.find("allOf"); all != schema.end()) {
            if (!all->is_array() || all->size() != 1) fail(path + ".allOf", "is supported with exactly one schema");
            return compile((*all)[0], path + ".allOf[0]", depth + 1);
        }
        const auto type = schema.find("type");
        if (type == schema.end()) {
            if (schema.contains("properties") || schema.contains("required") || schema.contains("additionalProperties"))
                return typed("object", schema, path, depth);
            if (schema.contains("items")) return typed("array", schema, path, depth);
            return any();
        }
        if (type->is_string()) return typed(type->get<std::string>(), schema, path, depth);
        if (!type->is_array() || type->empty()) fail(path + ".type", "must be a type name or an array of them");
        SchemaNode* node = add(SchemaNode::Kind::Union);
        for (const json& t : *type) {
            if (!t.is_string()) fail(path + ".type", "must be a type name or an array of them");
            node->alternatives.push_back(typed(t.get<std::string>(), schema, path, depth));
        }
        return node;
    }

    void finish(const SchemaNode* root) {
        computeMinLengths();
        for (auto& n : *grammar_.nodes_)
            if (n->kind == SchemaNode::Kind::Union) findPrefixes(*n);
        if (root->minLength == kUnbounded) fail("schema", "has no finite instance (a required property recurses forever)");
    }

private:
    [[noreturn]] static void fail(const std::string& path, const std::string& what) {
        throw GrammarError(fmt::format("{} {}", path, what));
    }

    SchemaNode* add(SchemaNode::Kind kind) {
        grammar_.nodes_->push_back(std::make_unique<SchemaNode>());
        grammar_.nodes_->back()->kind = kind;
        return grammar_.nodes_->back().get();
    }

    const SchemaNode* any() {
        if (!any_) any_ = add(SchemaNode::Kind::Any);
        return any_;
    }

    static void checkKeyword(const std::string& key, const json& value, const std::string& path) {
        static const char* const kUnsupported[] = {"pattern", "format", "patternProperties", "propertyNames",
                                                   "minProperties", "maxProperties", "multipleOf", "maximum",
                                                   "exclusiveMinimum", "exclusiveMaximum", "uniqueItems",
                                                   "prefixItems", "contains", "not", "if", "then", "else",
                                                   "dependentRequired", "dependentSchemas", "unevaluatedProperties"};
        for (const char* u : kUnsupported) {
            if (key == u) fail(path + "." + key, "is not supported by structured output (the grammar cannot enforce it)");
        }
        if (key == "minimum" && !(value.is_number() && value.get<double>() == 0.0))
            fail(path + ".minimum", "is supported only as 0");
    }

    const SchemaNode* reference(const json& ref, const std::string& path, int depth) {
        if (!ref.is_string()) fail(path + ".$ref", "must be a string");
        const std::string target = ref.get<std::string>();
        if (const auto it = refs_.find(target); it != refs_.end()) return it->second;
        const json* schema = nullptr;
        if (target == "#") {
            schema = &root_;
        } else {
            for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
                const std::string p = prefix;
                if (target.rfind(p, 0) != 0) continue;
                // find, not operator[]: a const json's operator[] on a missing key reads past the
                // end (ASan caught it on {"$ref":"#/$defs/nope"} with no $defs).
                const auto defs = root_.find(p.substr(2, p.size() - 3));
                if (defs == root_.end() || !defs->is_object()) continue;
                const auto it = defs->find(target.substr(p.size()));
                if (it != defs->end()) schema = &*it;
            }
        }
        if (!schema) fail(path + ".$ref", fmt::format("'{}' does not name a schema under #/$defs or #/definitions", target));
        // A union of one placeholder, filled after compiling, so that a schema may refer to itself.
        SchemaNode* node = add(SchemaNode::Kind::Union);
        refs_[target] = node;
        node->alternatives.push_back(compile(*schema, target, depth + 1));
        return node;
    }

    const SchemaNode* literals(const json& values, const std::string& path) {
        if (values.size() > kMaxLiterals) fail(path, fmt::format("may list at most {} values", kMaxLiterals));
        SchemaNode* node = add(SchemaNode::Kind::Literals);
        for (const json& v : values) node->literals.push_back(v.dump());
        return node;
    }

    static int32_t count(const json& schema, const char* key, const std::string& path, int32_t fallback) {
        const auto it = schema.find(key);
        if (it == schema.end()) return fallback;
        if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1'000'000)
            fail(path + "." + key, "must be an integer from 0 to 1000000");
        return static_cast<int32_t>(it->get<int64_t>());
    }

    const SchemaNode* typed(const std::string& type, const json& schema, const std::string& path, int depth) {
        using Kind = SchemaNode::Kind;
        if (type == "null") return literals(json::array({nullptr}), path);
        if (type == "boolean") return literals(json::array({true, false}), path);
        if (type == "integer" || type == "number") {
            SchemaNode* node = add(type == "integer" ? Kind::Integer : Kind::Number);
            node->nonNegative = schema.contains("minimum");
            return node;
        }
        if (type == "string") {
            SchemaNode* node = add(Kind::String);
            node->minCount = count(schema, "minLength", path, 0);
            node->maxCount = count(schema, "maxLength", path, kUnbounded);
            if (node->minCount > node->maxCount) fail(path, "has minLength above maxLength");
            return node;
        }
        if (type == "array") {
            SchemaNode* node = add(Kind::Array);
            const auto items = schema.find("items");
            node->element = items == schema.end() ? any() : compile(*items, path + ".items", depth + 1);
            node->minCount = count(schema, "minItems", path, 0);
            node->maxCount = count(schema, "maxItems", path, kUnbounded);
            if (node->minCount > node->maxCount) fail(path, "has minItems above maxItems");
            return node;
        }
        if (type == "object") return object(schema, path, depth);
        fail(path + ".type", fmt::format("'{}' is not a JSON Schema type", type));
    }

    const SchemaNode* object(const json& schema, const std::string& path, int depth) {
        const auto props = schema.find("properties");
        const auto additional = schema.find("additionalProperties");
        std::vector<std::string> required;
        if (const auto r = schema.find("required"); r != schema.end()) {
            if (!r->is_array()) fail(path + ".required", "must be an array of property names");
            for (const json& name : *r) {
                if (!name.is_string()) fail(path + ".required", "must be an array of property names");
                required.push_back(name.get<std::string>());
            }
        }
        if ((props == schema.end() || props->empty()) && required.empty()) {
            SchemaNode* node = add(SchemaNode::Kind::FreeObject);
            const bool closed = additional != schema.end() && additional->is_boolean() && !additional->get<bool>();
            node->maxCount = closed ? 0 : kUnbounded;
            node->element = additional == schema.end() || additional->is_boolean()
                                ? any()
                                : compile(*additional, path + ".additionalProperties", depth + 1);
            return node;
        }
        SchemaNode* node = add(SchemaNode::Kind::Object);
        if (props != schema.end()) {
            if (!props->is_object()) fail(path + ".properties", "must be an object");
            for (const auto& [name, sub] : props->items()) {
                const bool isRequired = std::find(required.begin(), required.end(), name) != required.end();
                node->properties.push_back({json(name).dump(), compile(sub, path + ".properties." + name, depth + 1), isRequired});
            }
        }
        for (const std::string& name : required) {
            if (props != schema.end() && props->contains(name)) continue;
            if (additional != schema.end() && additional->is_boolean() && !additional->get<bool>())
                fail(path + ".required", fmt::format("names '{}', which additionalProperties false forbids", name));
            node->properties.push_back({json(name).dump(), any(), true});
        }
        if (node->properties.size() > kMaxProperties)
            fail(path + ".properties", fmt::format("may hold at most {} properties", kMaxProperties));
        return node;
    }

    // An object whose first property is a required constant has a fixed start.
    static std::string fixedStart(const SchemaNode* n) {
        while (n->kind == SchemaNode::Kind::Union && n->alternatives.size() == 1) n = n->alternatives[0];
        if (n->kind != SchemaNode::Kind::Object || n->properties.empty()) return {};
        const auto& first = n->properties[0];
        if (!first.required || first.value->kind != SchemaNode::Kind::Literals || first.value->literals.size() != 1) return {};
        return "{" + first.quotedKey + ":" + first.value->literals[0];
    }

    static void findPrefixes(SchemaNode& u) {
        if (u.alternatives.size() < 2 || u.alternatives.size() > 64) return;
        std::vector<std::string> prefixes;
        for (const SchemaNode* a : u.alternatives) {
            prefixes.push_back(fixedStart(a));
            if (prefixes.back().empty()) return;
        }
        for (size_t i = 0; i < prefixes.size(); ++i)
            for (size_t j = 0; j < prefixes.size(); ++j)
                if (i != j && prefixes[j].rfind(prefixes[i], 0) == 0) return;  // one starts another: ambiguous
        u.prefixes = std::move(prefixes);
    }

    // The shortest accepted text of every node, by repeated relaxation (recursion through
    // $ref settles: a cycle only through required properties stays unbounded).
    void computeMinLengths() {
        bool changed = true;
        while (changed) {
            changed = false;
            for (auto& n : *grammar_.nodes_) {
                const int32_t len = minLength(*n);
                if (len < n->minLength) {
                    n->minLength = len;
                    changed = true;
                }
            }
        }
    }

    static int32_t minLength(const SchemaNode& n) {
        using Kind = SchemaNode::Kind;
        switch (n.kind) {
            case Kind::Any: return 1;  // 0
            case Kind::Number:
            case Kind::Integer: return 1;
            case Kind::String: return saturatingAdd(2, n.minCount);
            case Kind::FreeObject: return 2;
            case Kind::Literals: {
                int32_t best = kUnbounded;
                for (const auto& l : n.literals) best = std::min(best, static_cast<int32_t>(l.size()));
                return best;
            }
            case Kind::Union: {
                int32_t best = kUnbounded;
                for (const SchemaNode* a : n.alternatives) best = std::min(best, a->minLength);
                return best;
            }
            case Kind::Array: {
                if (n.minCount == 0) return 2;
                return saturatingAdd(2 + (n.minCount - 1), static_cast<int64_t>(n.element->minLength) * n.minCount);
            }
            case Kind::Object: {
                int64_t len = 2;
                int required = 0;
                for (const auto& p : n.properties) {
                    if (!p.required) continue;
                    len += static_cast<int64_t>(p.quotedKey.size()) + 1 + p.value->minLength;
                    ++required;
                }
                return saturatingAdd(len, std::max(0, required - 1));
            }
        }
        return kUnbounded;
    }

    const json& root_;
    JsonGrammar& grammar_;
    const SchemaNode* any_ = nullptr;
    std::map<std::string, const SchemaNode*> refs_;
};

std::shared_ptr<const JsonGrammar> JsonGrammar::fromSchema(const json& schema) {
    auto g = std::make_shared<JsonGrammar>();
    SchemaCompiler compiler(schema, *g);
    g->root_ = compiler.compile(schema, "schema", 0);
    compiler.finish(g->root_);
    return g;
}

std::shared_ptr<const JsonGrammar> JsonGrammar::anyObject() {
    return fromSchema(json{{"type", "object"}});
}

std::shared_ptr<const JsonGrammar> JsonGrammar::framed(std::string prefix, std::string suffix, std::string trigger) const {
    auto g = std::make_shared<JsonGrammar>(*this);
    g->prefix = std::move(prefix);
    g->suffix = std::move(suffix);
    g->trigger = std::move(trigger);
    return g;
}

}  // namespace zinc::serve
