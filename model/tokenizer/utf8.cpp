#include "model/tokenizer/utf8.h"

namespace zinc::model::utf8 {

namespace {

bool isContinuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Expected total length and the smallest code point of that length, from a lead byte; 0 for
// bytes that can never start a sequence (continuations, 0xC0/0xC1 overlongs, 0xF5..0xFF).
size_t strictLength(uint8_t b) {
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return 2;
    if (b >= 0xE0 && b <= 0xEF) return 3;
    if (b >= 0xF0 && b <= 0xF4) return 4;
    return 0;
}

// Whether the second byte is allowed after this lead byte (excludes overlongs, surrogates and
// code points above U+10FFFF; the ranges of RFC 3629's table).
bool secondByteOk(uint8_t lead, uint8_t second) {
    switch (lead) {
        case 0xE0: return second >= 0xA0 && second <= 0xBF;
        case 0xED: return second >= 0x80 && second <= 0x9F;
        case 0xF0: return second >= 0x90 && second <= 0xBF;
        case 0xF4: return second >= 0x80 && second <= 0x8F;
        default: return isContinuation(second);
    }
}

// Bytes at `pos` that begin a valid sequence which is cut short (at least 1).
size_t maximalSubpartLength(std::string_view text, size_t pos) {
    const auto lead = static_cast<uint8_t>(text[pos]);
    const size_t len = strictLength(lead);
    if (len <= 1) return 1;
    size_t n = 1;
    while (n < len && pos + n < text.size()) {
        const auto b = static_cast<uint8_t>(text[pos + n]);
        if (n == 1 ? !secondByteOk(lead, b) : !isContinuation(b)) break;
        ++n;
    }
    return n;
}

}  // namespace

std::optional<char32_t> decodeOne(std::string_view text, size_t& pos) {
    if (pos >= text.size()) return std::nullopt;
    const auto lead = static_cast<uint8_t>(text[pos]);
    const size_t len = strictLength(lead);
    if (len == 0 || pos + len > text.size()) return std::nullopt;
    if (len == 1) {
        ++pos;
        return lead;
    }
    if (!secondByteOk(lead, static_cast<uint8_t>(text[pos + 1]))) return std::nullopt;
    char32_t cp = lead & (0x7F >> len);
    for (size_t i = 1; i < len; ++i) {
        const auto b = static_cast<uint8_t>(text[pos + i]);
        if (!isContinuation(b)) return std::nullopt;
        cp = (cp << 6) | (b & 0x3F);
    }
    pos += len;
    return cp;
}

void append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string encode(char32_t cp) {
    std::string s;
    append(s, cp);
    return s;
}

bool isValid(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
        if (!decodeOne(text, pos)) return false;
    }
    return true;
}

std::string sanitize(std::string_view text, Substitution how) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t start = pos;
        if (decodeOne(text, pos)) {
            out.append(text.substr(start, pos - start));
            continue;
        }
        out.append(kReplacementChar);
        pos = start + (how == Substitution::PerByte ? 1 : maximalSubpartLength(text, start));
    }
    return out;
}

size_t incompleteTailLength(std::string_view text) {
    // A sequence is at most 4 bytes, so only the last 3 bytes can be an unfinished prefix.
    const size_t maxBack = text.size() < 3 ? text.size() : 3;
    for (size_t back = 1; back <= maxBack; ++back) {
        const size_t start = text.size() - back;
        const auto lead = static_cast<uint8_t>(text[start]);
        if (isContinuation(lead)) continue;
        const size_t len = strictLength(lead);
        if (len <= back) return 0;  // complete (or invalid) already: nothing to wait for
        if (back >= 2 && !secondByteOk(lead, static_cast<uint8_t>(text[start + 1]))) return 0;
        for (size_t i = 2; i < back; ++i) {
            if (!isContinuation(static_cast<uint8_t>(text[start + i]))) return 0;
        }
        return back;
    }
    return 0;
}

}  // namespace zinc::model::utf8
