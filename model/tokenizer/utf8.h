#pragma once
// UTF-8 helpers shared by the encoders and decoders. Tokenizers meet arbitrary bytes (user
// text, byte-fallback tokens, partial sequences while streaming), so everything here is total:
// invalid input is reported or replaced, never read past.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zinc::model::utf8 {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

// Length of the sequence that lead byte `b` announces, using the same lenient table as
// llama.cpp (continuation bytes count as 1, 0xF8..0xFF as 4). The encoders split text into
// "characters" with it, so it must match llama.cpp byte for byte; callers clamp to what is left.
inline size_t leadLength(uint8_t b) {
    static constexpr uint8_t kTable[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kTable[b >> 4];
}

// Strictly decodes one code point at `pos` (no overlong forms, no surrogates, <= U+10FFFF).
// On success advances `pos`; on failure leaves it unchanged and returns nullopt.
std::optional<char32_t> decodeOne(std::string_view text, size_t& pos);

void append(std::string& out, char32_t cp);
std::string encode(char32_t cp);

bool isValid(std::string_view text);

// How invalid bytes are replaced by sanitize().
enum class Substitution {
    PerByte,         // one U+FFFD per byte that does not start a valid sequence: what
                     // llama.cpp's unicode_cpts_from_utf8 does before pre-tokenizing
    MaximalSubpart,  // one U+FFFD per maximal valid-but-unfinished prefix (Unicode's
                     // recommended practice, what Python's errors="replace" does): for output
};

// Returns `text` with every invalid sequence replaced by U+FFFD, so the result is valid UTF-8.
std::string sanitize(std::string_view text, Substitution how = Substitution::PerByte);

// How many bytes at the end of `text` form the beginning of a valid sequence that more bytes
// could still complete (0..3). A streaming decoder holds exactly these back.
size_t incompleteTailLength(std::string_view text);

}  // namespace zinc::model::utf8
