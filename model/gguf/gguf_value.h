#pragma once
// Helpers shared by the GGUF reader, writer and printer: sizes of the scalar value types,
// type names as "ARRAY[STRING]", and a one-line rendering of a value.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "model/gguf/gguf_file.h"

namespace zinc::model {

// Bytes of one scalar of this type in a GGUF file; nullopt for STRING and ARRAY, and for a
// number that names no GGUF value type.
std::optional<uint32_t> ggufScalarSize(uint32_t typeNumber);
bool ggufIsValueType(uint32_t typeNumber);
bool ggufIsIntegerType(GgufValueType type);

// "UINT32", "STRING", "ARRAY[FLOAT32]".
std::string ggufDescribeType(const GgufValue& value);

// The value as one line: numbers as numbers, strings quoted and escaped (cut after
// maxStringBytes), arrays as "[a, b, c, ...]" with at most maxArrayElems elements.
std::string ggufFormatValue(const GgufValue& value, size_t maxArrayElems, size_t maxStringBytes);
std::string ggufQuoteString(const std::string& s, size_t maxBytes);

// The value of an integer-typed GgufValue as a signed 128-bit-safe pair: nullopt when the type
// is not an integer type.
struct GgufInteger {
    bool negative;
    uint64_t magnitude;  // |value|
};
std::optional<GgufInteger> ggufIntegerOf(const GgufValue& value);

}  // namespace zinc::model
