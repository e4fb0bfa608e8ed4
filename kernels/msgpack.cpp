#include "kernels/msgpack.h"

#include <bit>
#include <cstring>

#include <fmt/format.h>

namespace zinc::kernels {
namespace {

class Reader {
public:
    Reader(std::span<const uint8_t> bytes, const MsgpackLimits& limits) : bytes_(bytes), limits_(limits) {}

    MsgValue value(int depth) {
        if (depth > limits_.maxDepth) fail(fmt::format("nesting deeper than {}", limits_.maxDepth));
        if (++values_ > limits_.maxValues) fail(fmt::format("more than {} values", limits_.maxValues));
        const size_t at = pos_;
        const uint8_t tag = byte();
        MsgValue v;
        if (tag <= 0x7f) return integer(static_cast<int64_t>(tag));
        if (tag >= 0xe0) return integer(static_cast<int8_t>(tag));
        if ((tag & 0xf0) == 0x80) return container(MsgValue::Kind::Map, tag & 0x0f, depth);
        if ((tag & 0xf0) == 0x90) return container(MsgValue::Kind::Array, tag & 0x0f, depth);
        if ((tag & 0xe0) == 0xa0) return str(MsgValue::Kind::Str, tag & 0x1f);
        switch (tag) {
            case 0xc0: return v;
            case 0xc2: case 0xc3: v.kind = MsgValue::Kind::Bool; v.boolean = tag == 0xc3; return v;
            case 0xc4: return str(MsgValue::Kind::Bin, be(1));
            case 0xc5: return str(MsgValue::Kind::Bin, be(2));
            case 0xc6: return str(MsgValue::Kind::Bin, be(4));
            case 0xca: v.kind = MsgValue::Kind::Float; v.real = std::bit_cast<float>(static_cast<uint32_t>(be(4))); return v;
            case 0xcb: v.kind = MsgValue::Kind::Float; v.real = std::bit_cast<double>(be(8)); return v;
            case 0xcc: return unsignedInt(be(1));
            case 0xcd: return unsignedInt(be(2));
            case 0xce: return unsignedInt(be(4));
            case 0xcf: return unsignedInt(be(8));
            case 0xd0: return integer(static_cast<int8_t>(be(1)));
            case 0xd1: return integer(static_cast<int16_t>(be(2)));
            case 0xd2: return integer(static_cast<int32_t>(be(4)));
            case 0xd3: return integer(static_cast<int64_t>(be(8)));
            case 0xd9: return str(MsgValue::Kind::Str, be(1));
            case 0xda: return str(MsgValue::Kind::Str, be(2));
            case 0xdb: return str(MsgValue::Kind::Str, be(4));
            case 0xdc: return container(MsgValue::Kind::Array, be(2), depth);
            case 0xdd: return container(MsgValue::Kind::Array, be(4), depth);
            case 0xde: return container(MsgValue::Kind::Map, be(2), depth);
            case 0xdf: return container(MsgValue::Kind::Map, be(4), depth);
            default: break;
        }
        pos_ = at;
        fail(fmt::format("unsupported type byte 0x{:02x}", tag));
    }

    size_t pos() const { return pos_; }

    [[noreturn]] void fail(const std::string& what) const {
        throw MsgpackError(fmt::format("msgpack: {} at byte {} of {}", what, pos_, bytes_.size()));
    }

private:
    uint8_t byte() {
        if (pos_ >= bytes_.size()) fail("unexpected end");
        return bytes_[pos_++];
    }
    uint64_t be(int n) {
        if (bytes_.size() - pos_ < static_cast<size_t>(n)) fail(fmt::format("{}-byte field runs past the end", n));
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v = v << 8 | bytes_[pos_++];
        return v;
    }
    static MsgValue integer(int64_t i) {
        MsgValue v;
        v.kind = MsgValue::Kind::Int;
        v.integer = i;
        v.uinteger = static_cast<uint64_t>(i);
        return v;
    }
    static MsgValue unsignedInt(uint64_t u) {
        MsgValue v = integer(static_cast<int64_t>(u));
        v.uinteger = u;
        v.isUnsigned = u > static_cast<uint64_t>(INT64_MAX);
        return v;
    }
    MsgValue str(MsgValue::Kind kind, uint64_t n) {
        if (n > bytes_.size() - pos_) fail(fmt::format("{} of {} bytes runs past the end", kind == MsgValue::Kind::Str ? "string" : "bin", n));
        MsgValue v;
        v.kind = kind;
        v.text = std::string_view(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n);
        return v;
    }
    MsgValue container(MsgValue::Kind kind, uint64_t count, int depth) {
        const uint64_t elements = kind == MsgValue::Kind::Map ? count * 2 : count;
        // Every element takes at least one byte: a count beyond the bytes left is corrupt.
        if (elements > bytes_.size() - pos_) fail(fmt::format("container of {} elements is larger than the data left", count));
        MsgValue v;
        v.kind = kind;
        v.items.reserve(static_cast<size_t>(elements));
        for (uint64_t i = 0; i < elements; ++i) v.items.push_back(value(depth + 1));
        return v;
    }

    std::span<const uint8_t> bytes_;
    const MsgpackLimits& limits_;
    size_t pos_ = 0;
    size_t values_ = 0;
};

}  // namespace

const MsgValue* MsgValue::find(std::string_view key) const {
    if (kind != Kind::Map) return nullptr;
    for (size_t i = 0; i + 1 < items.size(); i += 2)
        if (items[i].kind == Kind::Str && items[i].text == key) return &items[i + 1];
    return nullptr;
}

std::optional<uint64_t> MsgValue::asUnsigned() const {
    if (kind != Kind::Int || (!isUnsigned && integer < 0)) return std::nullopt;
    return uinteger;
}

std::optional<std::string_view> MsgValue::asString() const {
    if (kind != Kind::Str) return std::nullopt;
    return text;
}

MsgValue parseMsgpack(std::span<const uint8_t> bytes, const MsgpackLimits& limits) {
    Reader reader(bytes, limits);
    MsgValue v = reader.value(0);
    if (reader.pos() != bytes.size()) reader.fail("trailing bytes after the value");
    return v;
}

}  // namespace zinc::kernels
