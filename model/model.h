#pragma once
// A loaded model: the mapped GGUF file, its config, its bound weights and (when the file has
// one) its tokenizer. Everything a tier or the graph builder needs, read once.
#include <memory>
#include <string>

#include "model/gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/tokenizer/tokenizer.h"

namespace zinc::model {

class Model {
public:
    // Throws ModelError / GgufError naming the file and the problem.
    static std::unique_ptr<Model> load(const std::string& path);

    const GgufFile& file() const { return *file_; }
    const ModelConfig& config() const { return config_; }
    const ModelWeights& weights() const { return weights_; }
    bool hasTokenizer() const { return tokenizer_ != nullptr; }
    // Throws ModelError when the file carries no tokenizer (e.g. tiny-qwen3-q8_0.gguf).
    const Tokenizer& tokenizer() const;

private:
    std::unique_ptr<GgufFile> file_;
    ModelConfig config_;
    ModelWeights weights_;
    std::unique_ptr<Tokenizer> tokenizer_;
};

}  // namespace zinc::model
