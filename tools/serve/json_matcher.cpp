#include "tools/serve/json_matcher.h"

#include <algorithm>
#include <bit>
#include <optional>

namespace zinc::serve {
namespace {

using Kind = SchemaNode::Kind;

constexpr int32_t kMaxDigits = 15;  // integer and fraction digits each: every value fits a double exactly
const std::vector<std::string> kAnyLiterals = {"true", "false", "null"};

bool isDigit(uint8_t c) { return c >= '0' && c <= '9'; }
bool isHex(uint8_t c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

int32_t add(int64_t a, int64_t b) { return static_cast<int32_t>(std::min<int64_t>(a + b, kUnbounded)); }

// Object phases.
enum : uint8_t { kOpen = 0, kFirst = 1, kAfterValue = 2, kAfterComma = 3, kInKey = 4, kColon = 5 };
// String phases (kOpen as above).
enum : uint8_t { kBody = 1, kEscape = 2, kHex = 3 };

bool hasRequiredFrom(const SchemaNode& n, int32_t from) {
    for (size_t i = static_cast<size_t>(from); i < n.properties.size(); ++i)
        if (n.properties[i].required) return true;
    return false;
}

// Bytes to write the required properties from index `from` on, and how many there are.
std::pair<int64_t, int32_t> requiredCost(const SchemaNode& n, int32_t from) {
    int64_t cost = 0;
    int32_t count = 0;
    for (size_t i = static_cast<size_t>(from); i < n.properties.size(); ++i) {
        const auto& p = n.properties[i];
        if (!p.required) continue;
        cost += static_cast<int64_t>(p.quotedKey.size()) + 1 + p.value->minLength;
        ++count;
    }
    return {cost, count};
}

// After property k's key: ':' + its value + the required ones after it + '}'.
int32_t afterKeyCost(const SchemaNode& n, int32_t k) {
    const auto [cost, count] = requiredCost(n, k + 1);
    return add(1 + static_cast<int64_t>(n.properties[static_cast<size_t>(k)].value->minLength) + cost, count + 1);
}

}  // namespace

bool canStart(const SchemaNode& node, uint8_t c) {
    switch (node.kind) {
        case Kind::Any:
            return c == '{' || c == '[' || c == '"' || c == '-' || isDigit(c) || c == 't' || c == 'f' || c == 'n';
        case Kind::Object:
        case Kind::FreeObject: return c == '{';
        case Kind::Array: return c == '[';
        case Kind::String: return c == '"';
        case Kind::Number:
        case Kind::Integer: return isDigit(c) || (c == '-' && !node.nonNegative);
        case Kind::Literals:
            return std::any_of(node.literals.begin(), node.literals.end(),
                               [&](const std::string& l) { return !l.empty() && static_cast<uint8_t>(l[0]) == c; });
        case Kind::Union:
            return std::any_of(node.alternatives.begin(), node.alternatives.end(),
                               [&](const SchemaNode* a) { return canStart(*a, c); });
    }
    return false;
}

JsonMatcher::JsonMatcher(std::shared_ptr<const JsonGrammar> grammar) : grammar_(std::move(grammar)) {
    stack_.reserve(16);
    if (!grammar_->suffix.empty()) stack_.push_back({.kind = FrameKind::Text, .text = &grammar_->suffix});
    push(FrameKind::Value, grammar_->root());
    if (!grammar_->prefix.empty()) stack_.push_back({.kind = FrameKind::Text, .text = &grammar_->prefix});
}

void JsonMatcher::push(FrameKind kind, const SchemaNode* node) { stack_.push_back({.kind = kind, .node = node}); }

bool JsonMatcher::feed(uint8_t c) {
    while (!stack_.empty()) {
        bool again = false;
        if (!feedFrame(stack_.back(), c, again)) return false;
        if (!again) return true;
    }
    return false;
}

bool JsonMatcher::complete() const {
    if (stack_.empty()) return true;
    if (stack_.size() != 1) return false;
    const Frame& f = stack_[0];  // a number, or a literal that another one extends, may end here
    if (f.kind == FrameKind::Number) return f.phase == 2 || f.phase == 3 || f.phase == 5;
    if (f.kind == FrameKind::Literal) {
        const auto& lits = f.node->kind == Kind::Any ? kAnyLiterals : f.node->literals;
        for (size_t i = 0; i < lits.size(); ++i)
            if ((f.alive >> i & 1) && lits[i].size() == static_cast<size_t>(f.pos)) return true;
    }
    return false;
}

bool JsonMatcher::feedFrame(Frame& f, uint8_t c, bool& again) {
    switch (f.kind) {
        case FrameKind::Text:
            if (static_cast<uint8_t>((*f.text)[static_cast<size_t>(f.pos)]) != c) return false;
            if (static_cast<size_t>(++f.pos) == f.text->size()) stack_.pop_back();
            return true;
        case FrameKind::Value: again = true; return start(f, c);
        case FrameKind::Object: return feedObject(f, c);
        case FrameKind::FreeObject: return feedFreeObject(f, c);
        case FrameKind::Array: return feedArray(f, c, again);
        case FrameKind::String: return feedString(f, c);
        case FrameKind::Number: return feedNumber(f, c, again);
        case FrameKind::Literal: return feedLiteral(f, c, again);
        case FrameKind::Prefixed: return feedPrefixed(f, c);
    }
    return false;
}

bool JsonMatcher::start(Frame& f, uint8_t c) {
    const SchemaNode* node = f.node;
    while (node->kind == Kind::Union) {
        if (!node->prefixes.empty()) {  // the alternatives' fixed starts pick one
            f = Frame{.kind = FrameKind::Prefixed, .node = node};
            f.alive = node->prefixes.size() >= 64 ? ~0ull : (1ull << node->prefixes.size()) - 1;
            return true;
        }  // the first alternative that can start with c
        const auto it = std::find_if(node->alternatives.begin(), node->alternatives.end(),
                                     [&](const SchemaNode* a) { return canStart(*a, c); });
        if (it == node->alternatives.end()) return false;
        node = *it;
    }
    if (!canStart(*node, c)) return false;
    f = Frame{.kind = FrameKind::Literal, .node = node};
    switch (node->kind) {
        case Kind::Any:
            f.kind = c == '{' ? FrameKind::FreeObject
                     : c == '[' ? FrameKind::Array
                     : c == '"' ? FrameKind::String
                     : (c == '-' || isDigit(c)) ? FrameKind::Number
                                                : FrameKind::Literal;
            break;
        case Kind::Object: f.kind = FrameKind::Object; break;
        case Kind::FreeObject: f.kind = FrameKind::FreeObject; break;
        case Kind::Array: f.kind = FrameKind::Array; break;
        case Kind::String: f.kind = FrameKind::String; break;
        case Kind::Number:
        case Kind::Integer: f.kind = FrameKind::Number; break;
        default: break;
    }
    if (f.kind == FrameKind::Literal) {
        const size_t n = node->kind == Kind::Any ? kAnyLiterals.size() : node->literals.size();
        f.alive = n >= 64 ? ~0ull : (1ull << n) - 1;
    }
    return true;  // c goes to the new frame
}

// What every object shares: '{', then '}' or ',' between members. nullopt: c may start a key
// or be the ':' after one, which the caller knows.
std::optional<bool> JsonMatcher::objectPunctuation(Frame& f, uint8_t c, bool mayClose, bool mayContinue) {
    if (f.phase == kOpen) {
        if (c != '{') return false;
        f.phase = kFirst;
        return true;
    }
    if (f.phase != kFirst && f.phase != kAfterValue && f.phase != kAfterComma) return std::nullopt;
    if (c == '}' && f.phase != kAfterComma && mayClose) {
        stack_.pop_back();
        return true;
    }
    if (c == ',' && f.phase == kAfterValue && mayContinue) {
        f.phase = kAfterComma;
        return true;
    }
    if (f.phase == kAfterValue || c != '"') return false;
    return std::nullopt;
}

bool JsonMatcher::feedObject(Frame& f, uint8_t c) {
    const SchemaNode& n = *f.node;
    const auto props = static_cast<int32_t>(n.properties.size());
    if (auto r = objectPunctuation(f, c, !hasRequiredFrom(n, f.count), f.count < props)) return *r;
    switch (f.phase) {
        case kFirst:
        case kAfterComma:  // c is '"'
            if (f.count >= props) return false;
            f.alive = 0;  // the optional keys up to and including the next required one
            for (int32_t k = f.count; k < props; ++k) {
                f.alive |= 1ull << k;
                if (n.properties[static_cast<size_t>(k)].required) break;
            }
            f.pos = 1;
            f.phase = kInKey;
            return true;
        case kInKey: {
            uint64_t matches = 0;
            for (uint64_t a = f.alive; a; a &= a - 1) {
                const int k = std::countr_zero(a);
                const std::string& key = n.properties[static_cast<size_t>(k)].quotedKey;
                if (static_cast<size_t>(f.pos) < key.size() && static_cast<uint8_t>(key[static_cast<size_t>(f.pos)]) == c)
                    matches |= 1ull << k;
            }
            if (!matches) return false;
            f.alive = matches;
            ++f.pos;
            for (uint64_t a = matches; a; a &= a - 1) {  // keys are quoted: one that ends is the only one left
                const int k = std::countr_zero(a);
                if (n.properties[static_cast<size_t>(k)].quotedKey.size() == static_cast<size_t>(f.pos)) {
                    f.count = k + 1;
                    f.phase = kColon;
                }
            }
            return true;
        }
        case kColon: {
            if (c != ':') return false;
            f.phase = kAfterValue;
            const SchemaNode* value = n.properties[static_cast<size_t>(f.count - 1)].value;
            push(FrameKind::Value, value);
            return true;
        }
    }
    return false;
}

bool JsonMatcher::feedFreeObject(Frame& f, uint8_t c) {
    const bool any = f.node->kind == Kind::Any;
    const SchemaNode* element = any ? f.node : f.node->element;
    const bool closed = !any && f.node->maxCount == 0;
    if (auto r = objectPunctuation(f, c, true, true)) return *r;
    if (f.phase == kColon) {
        if (c != ':') return false;
        f.phase = kAfterValue;
        push(FrameKind::Value, element);
        return true;
    }
    if (closed) return false;  // c is '"': a key, which additionalProperties false forbids
    f.phase = kColon;
    stack_.push_back({.kind = FrameKind::String, .phase = kBody, .node = nullptr});
    return true;
}

bool JsonMatcher::feedArray(Frame& f, uint8_t c, bool& again) {
    const bool any = f.node->kind == Kind::Any;
    const SchemaNode* element = any ? f.node : f.node->element;
    const int32_t minItems = any ? 0 : f.node->minCount;
    const int32_t maxItems = any ? kUnbounded : f.node->maxCount;
    switch (f.phase) {
        case kOpen:
            if (c != '[') return false;
            f.phase = kFirst;
            return true;
        case kFirst:
            if (c == ']' && minItems == 0) {
                stack_.pop_back();
                return true;
            }
            if (maxItems == 0) return false;
            f.phase = kAfterValue;
            f.count = 1;
            push(FrameKind::Value, element);
            again = true;
            return true;
        case kAfterValue:
            if (c == ']' && f.count >= minItems) {
                stack_.pop_back();
                return true;
            }
            if (c == ',' && f.count < maxItems) {
                ++f.count;
                push(FrameKind::Value, element);
                return true;
            }
            return false;
    }
    return false;
}

bool JsonMatcher::feedString(Frame& f, uint8_t c) {
    const bool limited = f.node && f.node->kind == Kind::String;
    const int32_t minChars = limited ? f.node->minCount : 0;
    const int32_t maxChars = limited ? f.node->maxCount : kUnbounded;
    switch (f.phase) {
        case kOpen:
            if (c != '"') return false;
            f.phase = kBody;
            return true;
        case kBody:
            if (f.pos > 0) {  // inside a multi-byte character
                if (c < f.nextLo || c > f.nextHi) return false;
                --f.pos;
                f.nextLo = 0x80;
                f.nextHi = 0xBF;
                return true;
            }
            if (c == '"') {
                if (f.count < minChars) return false;
                stack_.pop_back();
                return true;
            }
            if (f.count >= maxChars || c < 0x20) return false;
            if (c == '\\') {
                f.phase = kEscape;
                return true;
            }
            if (c >= 0x80) {  // well-formed UTF-8 only (RFC 3629): no overlong forms, surrogates or > U+10FFFF
                if (c >= 0xC2 && c <= 0xDF) f.pos = 1;
                else if (c >= 0xE0 && c <= 0xEF) f.pos = 2;
                else if (c >= 0xF0 && c <= 0xF4) f.pos = 3;
                else return false;
                f.nextLo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
                f.nextHi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
            }
            ++f.count;
            return true;
        case kEscape:
            if (c == 'u') {
                f.phase = kHex;
                f.pos = 4;
                return true;
            }
            if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' && c != 'r' && c != 't') return false;
            f.phase = kBody;
            ++f.count;
            return true;
        case kHex:
            if (!isHex(c)) return false;
            if (--f.pos == 0) {
                f.phase = kBody;
                ++f.count;
            }
            return true;
    }
    return false;
}

// Phases: 0 start, 1 after '-', 2 integer digits, 3 a leading 0, 4 after '.', 5 fraction digits.
bool JsonMatcher::feedNumber(Frame& f, uint8_t c, bool& again) {
    const bool integer = f.node->kind == Kind::Integer;
    const bool nonNegative = f.node->kind != Kind::Any && f.node->nonNegative;
    switch (f.phase) {
        case 0:
            if (c == '-' && !nonNegative) {
                f.phase = 1;
                return true;
            }
            [[fallthrough]];
        case 1:
            if (!isDigit(c)) return false;
            f.phase = c == '0' ? 3 : 2;
            f.count = 1;
            return true;
        case 4:
            if (!isDigit(c)) return false;
            f.phase = 5;
            f.count = 1;
            return true;
        default: break;
    }
    if (isDigit(c) && f.phase != 3 && f.count < kMaxDigits) {
        ++f.count;
        return true;
    }
    if (c == '.' && !integer && (f.phase == 2 || f.phase == 3)) {
        f.phase = 4;
        return true;
    }
    // The number ends; c belongs to what follows it.
    stack_.pop_back();
    again = true;
    return true;
}

bool JsonMatcher::feedLiteral(Frame& f, uint8_t c, bool& again) {
    const auto& lits = f.node->kind == Kind::Any ? kAnyLiterals : f.node->literals;
    const auto pos = static_cast<size_t>(f.pos);
    uint64_t matches = 0;
    bool anyEnds = false;
    for (uint64_t a = f.alive; a; a &= a - 1) {
        const auto i = static_cast<size_t>(std::countr_zero(a));
        if (lits[i].size() == pos) anyEnds = true;
        else if (static_cast<uint8_t>(lits[i][pos]) == c) matches |= 1ull << i;
    }
    if (matches) {
        f.alive = matches;
        ++f.pos;
        bool allEnd = true;
        for (uint64_t a = matches; a; a &= a - 1)
            if (lits[static_cast<size_t>(std::countr_zero(a))].size() != pos + 1) allEnd = false;
        if (allEnd) stack_.pop_back();
        return true;
    }
    if (!anyEnds) return false;
    stack_.pop_back();  // a literal that another one extends ends here
    again = true;
    return true;
}

// The object alternative behind a prefix, after its first property.
namespace {
const SchemaNode* prefixedObject(const SchemaNode* n) {
    while (n->kind == Kind::Union && n->alternatives.size() == 1) n = n->alternatives[0];
    return n;
}
}  // namespace

bool JsonMatcher::feedPrefixed(Frame& f, uint8_t c) {
    const auto& prefixes = f.node->prefixes;
    const auto pos = static_cast<size_t>(f.pos);
    uint64_t matches = 0;
    for (uint64_t a = f.alive; a; a &= a - 1) {
        const auto i = static_cast<size_t>(std::countr_zero(a));
        if (pos < prefixes[i].size() && static_cast<uint8_t>(prefixes[i][pos]) == c) matches |= 1ull << i;
    }
    if (!matches) return false;
    f.alive = matches;
    ++f.pos;
    const auto k = static_cast<size_t>(std::countr_zero(matches));
    if ((matches & (matches - 1)) == 0 && prefixes[k].size() == pos + 1)  // one left, its start written
        f = Frame{.kind = FrameKind::Object, .phase = kAfterValue, .node = prefixedObject(f.node->alternatives[k]), .count = 1};
    return true;
}

int32_t JsonMatcher::shortestCompletion() const {
    int64_t total = 0;
    for (const Frame& f : stack_) total += frameCompletion(f);
    return static_cast<int32_t>(std::min<int64_t>(total, kUnbounded));
}

int32_t JsonMatcher::frameCompletion(const Frame& f) const {
    const SchemaNode* n = f.node;
    switch (f.kind) {
        case FrameKind::Text: return static_cast<int32_t>(f.text->size()) - f.pos;
        case FrameKind::Value: return n->minLength;
        case FrameKind::Literal: {
            const auto& lits = n->kind == Kind::Any ? kAnyLiterals : n->literals;
            int32_t best = kUnbounded;
            for (uint64_t a = f.alive; a; a &= a - 1)
                best = std::min(best, static_cast<int32_t>(lits[static_cast<size_t>(std::countr_zero(a))].size()) - f.pos);
            return best;
        }
        case FrameKind::String: {
            const int32_t minChars = n && n->kind == Kind::String ? n->minCount : 0;
            if (f.phase == kOpen) return add(2, minChars);
            const int32_t pending = f.phase == kBody ? f.pos : f.phase == kEscape ? 1 : f.pos;
            const int32_t counted = f.count + (f.phase == kBody ? 0 : 1);
            return add(pending + 1, std::max(0, minChars - counted));
        }
        case FrameKind::Number: return f.phase == 0 || f.phase == 1 || f.phase == 4 ? 1 : 0;
        case FrameKind::Prefixed: {
            int32_t best = kUnbounded;
            for (uint64_t a = f.alive; a; a &= a - 1) {
                const auto i = static_cast<size_t>(std::countr_zero(a));
                const Frame rest{.kind = FrameKind::Object, .phase = kAfterValue, .node = prefixedObject(n->alternatives[i]), .count = 1};
                best = std::min(best, add(static_cast<int64_t>(n->prefixes[i].size()) - f.pos, frameCompletion(rest)));
            }
            return best;
        }
        case FrameKind::Array: {
            const bool any = n->kind == Kind::Any;
            const int32_t minItems = any ? 0 : n->minCount;
            const int64_t element = any ? 1 : n->element->minLength;
            if (f.phase == kOpen) return any ? 2 : n->minLength;
            const int32_t owed = std::max(0, minItems - (f.phase == kFirst ? 0 : f.count));
            if (f.phase == kFirst) return owed == 0 ? 1 : add(element * owed + owed - 1, 1);
            return add((element + 1) * owed, 1);
        }
        case FrameKind::FreeObject: {
            const int64_t element = n->kind == Kind::Any ? 1 : n->element->minLength;
            switch (f.phase) {
                case kOpen: return 2;
                case kAfterComma: return add(2 + 1 + element, 1);
                case kColon: return add(1 + element, 1);
                default: return 1;
            }
        }
        case FrameKind::Object: {
            const auto [cost, count] = requiredCost(*n, f.count);
            switch (f.phase) {
                case kOpen: return n->minLength;
                case kFirst: return add(cost, std::max(0, count - 1) + 1);
                case kAfterValue: return add(cost, count + 1);
                case kAfterComma:
                    if (count > 0) return add(cost, count);
                    return add(static_cast<int64_t>(n->properties[static_cast<size_t>(f.count)].quotedKey.size()),
                               afterKeyCost(*n, f.count));
                case kColon: return afterKeyCost(*n, f.count - 1);
                case kInKey: {
                    int32_t best = kUnbounded;
                    for (uint64_t a = f.alive; a; a &= a - 1) {
                        const int k = std::countr_zero(a);
                        const auto keyLeft = static_cast<int64_t>(n->properties[static_cast<size_t>(k)].quotedKey.size()) - f.pos;
                        best = std::min(best, add(keyLeft, afterKeyCost(*n, k)));
                    }
                    return best;
                }
            }
            return kUnbounded;
        }
    }
    return kUnbounded;
}

}  // namespace zinc::serve
