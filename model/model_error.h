#pragma once
// Errors of the model layer (GGUF files, tokenizers, model configs). The message always names
// the file, key or tensor involved, so the CLI can print it as one line and exit non-zero.
#include <stdexcept>
#include <string>

namespace zinc::model {

class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace zinc::model
