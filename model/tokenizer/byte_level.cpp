#include "model/tokenizer/byte_level.h"

#include <array>

#include "model/tokenizer/utf8.h"

namespace zinc::model::byte_level {

namespace {

struct Tables {
    std::array<std::string, 256> byteToSymbol;
    std::array<int16_t, 324> symbolToByte;  // code points < 0x144 only: 256 + 68 remapped

    Tables() {
        symbolToByte.fill(-1);
        int next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            const int cp = printable ? b : next++;
            byteToSymbol[b] = utf8::encode(static_cast<char32_t>(cp));
            symbolToByte[cp] = static_cast<int16_t>(b);
        }
    }
};

const Tables& tables() {
    static const Tables t;
    return t;
}

}  // namespace

const std::string& byteToSymbol(uint8_t byte) { return tables().byteToSymbol[byte]; }

std::optional<uint8_t> symbolToByte(char32_t cp) {
    const auto& t = tables();
    if (cp >= t.symbolToByte.size() || t.symbolToByte[cp] < 0) return std::nullopt;
    return static_cast<uint8_t>(t.symbolToByte[cp]);
}

std::string encode(std::string_view bytes) {
    const auto& t = tables();
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char c : bytes) out += t.byteToSymbol[static_cast<uint8_t>(c)];
    return out;
}

std::string decode(std::string_view symbols) {
    std::string out;
    out.reserve(symbols.size());
    size_t pos = 0;
    while (pos < symbols.size()) {
        const size_t start = pos;
        const auto cp = utf8::decodeOne(symbols, pos);
        if (!cp) {  // not UTF-8 at all: keep the byte as it is
            out += symbols[pos++];
            continue;
        }
        if (const auto b = symbolToByte(*cp)) {
            out += static_cast<char>(*b);
        } else {
            out.append(symbols.substr(start, pos - start));
        }
    }
    return out;
}

}  // namespace zinc::model::byte_level
