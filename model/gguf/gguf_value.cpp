#include "model/gguf/gguf_value.h"

#include <array>
#include <cstdio>
#include <type_traits>

namespace zinc::model {
namespace {

struct ValueTypeRow {
    std::string_view name;
    uint32_t size;  // 0 for STRING and ARRAY (variable length)
};

// Indexed by the gguf_type number (GGUF spec, ggml/docs/gguf.md).
constexpr std::array<ValueTypeRow, 13> kValueTypes = {{
    {"UINT8", 1}, {"INT8", 1}, {"UINT16", 2}, {"INT16", 2}, {"UINT32", 4}, {"INT32", 4},
    {"FLOAT32", 4}, {"BOOL", 1}, {"STRING", 0}, {"ARRAY", 0}, {"UINT64", 8}, {"INT64", 8},
    {"FLOAT64", 8},
}};

template <class T>
std::string formatScalar(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v ? "true" : "false";
    } else if constexpr (std::is_same_v<T, std::string>) {
        return ggufQuoteString(v, 80);
    } else if constexpr (std::is_floating_point_v<T>) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
        return buf;
    } else {
        return std::to_string(v);
    }
}

template <class T>
std::optional<GgufInteger> integerOf(const T& v) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        if constexpr (std::is_signed_v<T>) {
            if (v < 0) return GgufInteger{true, static_cast<uint64_t>(-(static_cast<__int128>(v)))};
        }
        return GgufInteger{false, static_cast<uint64_t>(v)};
    } else {
        return std::nullopt;
    }
}

}  // namespace

std::string_view ggufValueTypeName(GgufValueType type) {
    const auto n = static_cast<uint32_t>(type);
    return n < kValueTypes.size() ? kValueTypes[n].name : std::string_view("UNKNOWN");
}

size_t GgufArray::size() const {
    return std::visit([](const auto& v) { return v.size(); }, values);
}

bool ggufIsValueType(uint32_t typeNumber) { return typeNumber < kValueTypes.size(); }

std::optional<uint32_t> ggufScalarSize(uint32_t typeNumber) {
    if (typeNumber >= kValueTypes.size() || kValueTypes[typeNumber].size == 0) return std::nullopt;
    return kValueTypes[typeNumber].size;
}

bool ggufIsIntegerType(GgufValueType type) {
    switch (type) {
    case GgufValueType::UINT8: case GgufValueType::INT8: case GgufValueType::UINT16:
    case GgufValueType::INT16: case GgufValueType::UINT32: case GgufValueType::INT32:
    case GgufValueType::UINT64: case GgufValueType::INT64:
        return true;
    default:
        return false;
    }
}

std::string ggufDescribeType(const GgufValue& value) {
    std::string name(ggufValueTypeName(value.type));
    if (const auto* arr = std::get_if<GgufArray>(&value.value)) {
        name += '[';
        name += ggufValueTypeName(arr->elemType);
        name += ']';
    }
    return name;
}

std::string ggufQuoteString(const std::string& s, size_t maxBytes) {
    std::string out = "\"";
    const size_t n = std::min(s.size(), maxBytes);
    for (size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);  // UTF-8 passes through
        }
    }
    out += '"';
    if (n < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

std::string ggufFormatValue(const GgufValue& value, size_t maxArrayElems, size_t maxStringBytes) {
    if (const auto* arr = std::get_if<GgufArray>(&value.value)) {
        return std::visit(
            [&](const auto& vec) {
                std::string out = "[";
                const size_t n = std::min(vec.size(), maxArrayElems);
                for (size_t i = 0; i < n; ++i) {
                    if (i) out += ", ";
                    if constexpr (std::is_same_v<typename std::decay_t<decltype(vec)>::value_type, std::string>)
                        out += ggufQuoteString(vec[i], maxStringBytes);
                    else
                        out += formatScalar(static_cast<typename std::decay_t<decltype(vec)>::value_type>(vec[i]));
                }
                if (n < vec.size()) out += n ? ", ..." : "...";
                return out + "]";
            },
            arr->values);
    }
    if (const auto* s = std::get_if<std::string>(&value.value)) return ggufQuoteString(*s, maxStringBytes);
    return std::visit(
        [](const auto& v) -> std::string {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, GgufArray>) return {};
            else return formatScalar(v);
        },
        value.value);
}

std::optional<GgufInteger> ggufIntegerOf(const GgufValue& value) {
    return std::visit(
        [](const auto& v) -> std::optional<GgufInteger> {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, GgufArray>) return std::nullopt;
            else return integerOf(v);
        },
        value.value);
}

}  // namespace zinc::model
