#pragma once
// Human-readable dump of a GGUF file for `zinc-rt gguf FILE`: a header line, the metadata one
// key per line, the tensor table and the bytes per tensor type.
#include <ostream>

#include "model/gguf/gguf_file.h"

namespace zinc::model {

// Arrays print their type, length and the first few elements unless showAllArrayValues is set
// (long strings are cut the same way).
void printGguf(const GgufFile& file, std::ostream& out, bool showAllArrayValues = false);

}  // namespace zinc::model
