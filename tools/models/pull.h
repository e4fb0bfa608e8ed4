#pragma once
// `zinc-rt pull REPO[:FILE]`: one GGUF file of a Hugging Face style repository into the model
// cache (model_cache.h). URLs follow the Hub's layout: ENDPOINT/api/models/REPO lists the files
// (when FILE is left out: the one .gguf, else the Q4_K_M one), ENDPOINT/REPO/resolve/main/FILE
// downloads one. The download goes to FILE.partial and resumes from it (HTTP Range) after a cut
// connection or another run; the sha256 is checked against the server's X-Linked-Etag / ETag
// when that is a sha256, the file is opened as a whole GGUF (header, tensor extents against its
// size), and only then renamed into place (atomic within the cache folder).
#include <cstdint>
#include <filesystem>
#include <string>

namespace zinc::tools::models {

struct PullOptions {
    std::string endpoint = "https://huggingface.co";
    int attempts = 3;  // connections tried per pull; each resumes where the last stopped
};

// Returns the cached model's path. Throws std::runtime_error with one line: not found (404),
// no space left, a checksum or GGUF that does not match, a connection that kept failing.
std::filesystem::path pull(const std::string& ref, const PullOptions& options);

}  // namespace zinc::tools::models
