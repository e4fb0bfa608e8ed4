#pragma once
// GPT-2's byte-level alphabet: every byte maps to one printable code point, so byte-level BPE
// vocabularies hold only printable text ("Ġ" is the space byte 0x20, "Ċ" is 0x0A). The mapping
// is the one of OpenAI's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the
// other 68 bytes to U+0100 onwards in byte order.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zinc::model::byte_level {

// UTF-8 of the code point that stands for `byte`.
const std::string& byteToSymbol(uint8_t byte);

// The byte a code point stands for; nullopt for code points outside the alphabet.
std::optional<uint8_t> symbolToByte(char32_t cp);

// Maps every byte of `bytes` to its symbol.
std::string encode(std::string_view bytes);

// Inverse of encode(). Code points outside the alphabet (text that was never byte-encoded,
// e.g. an added token) are copied through unchanged rather than dropped.
std::string decode(std::string_view symbols);

}  // namespace zinc::model::byte_level
