#pragma once
// Reads a whole tokenizer file into memory, plain or gzip-compressed: zlib's gzread passes
// uncompressed files through unchanged, so callers need not look at the extension.
#include <string>

namespace zinc::model {

// Throws ModelError "PATH: ..." when the file cannot be opened or is a corrupt gzip stream.
std::string readMaybeGzipFile(const std::string& path);

}  // namespace zinc::model
