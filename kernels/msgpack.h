#pragma once
// A small, bounded MessagePack reader for the NT_AMDGPU_METADATA note of AMD code objects.
// Every length is checked against the bytes left before anything is allocated, nesting is
// limited, and errors name the byte offset. Strings point into the parsed buffer.
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace zinc::kernels {

class MsgpackError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MsgValue {
    enum class Kind : uint8_t { Nil, Bool, Int, Float, Str, Bin, Array, Map };
    Kind kind = Kind::Nil;
    bool boolean = false;
    bool isUnsigned = false;  // Int: the value came as a uint64 above INT64_MAX when true
    int64_t integer = 0;
    uint64_t uinteger = 0;
    double real = 0.0;
    std::string_view text;         // Str / Bin bytes
    std::vector<MsgValue> items;   // Array elements; Map keys and values interleaved

    size_t size() const { return kind == Kind::Map ? items.size() / 2 : items.size(); }
    // Map value under a string key, or nullptr.
    const MsgValue* find(std::string_view key) const;
    // A non-negative integer that fits in uint64, or nullopt.
    std::optional<uint64_t> asUnsigned() const;
    std::optional<std::string_view> asString() const;
};

struct MsgpackLimits {
    int maxDepth = 16;
    size_t maxValues = 1u << 20;
};

// Parses exactly one value spanning all of `bytes` (trailing bytes are an error).
MsgValue parseMsgpack(std::span<const uint8_t> bytes, const MsgpackLimits& limits = {});

}  // namespace zinc::kernels
