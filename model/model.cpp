#include "model/model.h"

#include <fmt/format.h>

namespace zinc::model {

std::unique_ptr<Model> Model::load(const std::string& path) {
    auto m = std::unique_ptr<Model>(new Model());
    m->file_ = GgufFile::open(path);
    m->config_ = ModelConfig::fromGguf(*m->file_);
    m->weights_ = ModelWeights::bind(*m->file_, m->config_);
    if (m->file_->has("tokenizer.ggml.model")) {
        m->tokenizer_ = std::make_unique<Tokenizer>(TokenizerData::fromGguf(*m->file_));
        if (m->tokenizer_->vocabSize() > m->config_.nVocab)
            throw ModelError(fmt::format("{}: tokenizer has {} tokens but token_embd.weight only {} rows",
                                         path, m->tokenizer_->vocabSize(), m->config_.nVocab));
    }
    return m;
}

const Tokenizer& Model::tokenizer() const {
    if (!tokenizer_)
        throw ModelError(fmt::format("{}: the file has no tokenizer (no tokenizer.ggml.model key); "
                                     "pass token ids instead of text", file_->path()));
    return *tokenizer_;
}

}  // namespace zinc::model
