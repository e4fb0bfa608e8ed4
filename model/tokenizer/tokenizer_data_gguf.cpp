// TokenizerData::fromGguf: the tokenizer.ggml.* keys llama.cpp's converters write, with the
// defaults llama.cpp's loader (llama_vocab::impl::load) applies when a key is absent.
#include <optional>
#include <type_traits>
#include <variant>

#include "model/gguf/gguf_file.h"
#include "model/model_error.h"
#include "model/tokenizer/pre_tokenizer.h"
#include "model/tokenizer/tokenizer_data.h"

namespace zinc::model {

namespace {

// A token id key, whatever integer type the converter used. Ids stored as -1 or 0xFFFFFFFF
// ("none", as llama2.c conversions write) and other out-of-range values come back as nullopt
// so the default stays, which is what llama.cpp does after warning.
std::optional<int32_t> findTokenId(const GgufFile& file, std::string_view key, size_t nTokens) {
    const GgufValue* value = file.find(key);
    if (!value) return std::nullopt;
    bool isInteger = false;
    std::optional<int64_t> raw;  // stays empty for unsigned values beyond INT64_MAX
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                isInteger = true;
                if constexpr (std::is_signed_v<T>) {
                    raw = static_cast<int64_t>(v);
                } else if (static_cast<uint64_t>(v) <= static_cast<uint64_t>(INT64_MAX)) {
                    raw = static_cast<int64_t>(v);
                }
            }
        },
        value->value);
    if (!isInteger) {
        throw ModelError(file.path() + ": key " + std::string(key) + " has type " +
                         std::string(ggufValueTypeName(value->type)) + ", expected an integer token id");
    }
    if (!raw) return std::nullopt;
    if (*raw < 0 || static_cast<uint64_t>(*raw) >= nTokens) return std::nullopt;
    return static_cast<int32_t>(*raw);
}

}  // namespace

TokenizerData TokenizerData::fromGguf(const GgufFile& file) {
    const std::string& path = file.path();
    TokenizerData data;

    const auto model = file.findString("tokenizer.ggml.model");
    if (!model) throw ModelError(path + ": missing key tokenizer.ggml.model (the file has no tokenizer)");
    if (*model == "llama") {
        data.kind = TokenizerKind::Spm;
    } else if (*model == "gpt2") {
        data.kind = TokenizerKind::Bpe;
    } else {
        throw ModelError(path + ": unsupported tokenizer model '" + *model +
                         "' (tokenizer.ggml.model); supported: llama (SPM), gpt2 (byte-level BPE)");
    }
    data.pre = file.findString("tokenizer.ggml.pre").value_or("default");

    auto tokens = file.findStringArray("tokenizer.ggml.tokens");
    if (!tokens || tokens->empty()) throw ModelError(path + ": missing or empty key tokenizer.ggml.tokens");
    data.tokens = std::move(*tokens);
    const size_t n = data.tokens.size();

    if (auto scores = file.findF32Array("tokenizer.ggml.scores")) {
        if (scores->size() != n) {
            throw ModelError(path + ": tokenizer.ggml.scores has " + std::to_string(scores->size()) +
                             " entries for " + std::to_string(n) + " tokens");
        }
        data.scores = std::move(*scores);
    }
    if (auto types = file.findI32Array("tokenizer.ggml.token_type")) {
        if (types->size() != n) {
            throw ModelError(path + ": tokenizer.ggml.token_type has " + std::to_string(types->size()) +
                             " entries for " + std::to_string(n) + " tokens");
        }
        data.tokenTypes = std::move(*types);
    }
    if (auto merges = file.findStringArray("tokenizer.ggml.merges")) data.merges = std::move(*merges);

    if (data.kind == TokenizerKind::Spm) {
        // llama.cpp's SPM defaults: <unk>=0, <s>=1, </s>=2, add BOS, space prefix.
        data.unk = 0;
        data.bos = 1;
        data.eos = 2;
        data.addBos = true;
        data.addSpacePrefix = true;
    } else {
        if (data.merges.empty()) throw ModelError(path + ": BPE tokenizer without tokenizer.ggml.merges");
        const auto spec = preTokenizerSpec(data.pre);
        if (!spec) {
            throw ModelError(path + ": unsupported pre-tokenizer '" + data.pre +
                             "' (tokenizer.ggml.pre); supported: default, gpt-2, llama3, llama-v3, llama-bpe, qwen2, qwen35");
        }
        // llama.cpp's BPE defaults: BOS = EOS = 11 (GPT-NeoX's), no BOS unless the family
        // (Llama 3) or the file asks for it, no space prefix.
        data.bos = 11;
        data.eos = 11;
        data.addBos = spec->addBosByDefault;
        data.addSpacePrefix = false;
    }
    // Defaults that do not exist in this vocabulary are dropped, as llama.cpp does.
    for (int32_t* id : {&data.bos, &data.eos, &data.unk}) {
        if (*id >= static_cast<int64_t>(n)) *id = -1;
    }

    const std::pair<const char*, int32_t*> idKeys[] = {
        {"tokenizer.ggml.bos_token_id", &data.bos},     {"tokenizer.ggml.eos_token_id", &data.eos},
        {"tokenizer.ggml.unknown_token_id", &data.unk}, {"tokenizer.ggml.padding_token_id", &data.pad},
        {"tokenizer.ggml.eot_token_id", &data.eot},
    };
    for (const auto& [key, id] : idKeys) {
        if (const auto value = findTokenId(file, key, n)) *id = *value;
    }

    if (const auto v = file.findBool("tokenizer.ggml.add_bos_token")) data.addBos = *v;
    if (const auto v = file.findBool("tokenizer.ggml.add_eos_token")) data.addEos = *v;
    if (const auto v = file.findBool("tokenizer.ggml.add_space_prefix")) data.addSpacePrefix = *v;
    if (data.addBos && data.bos < 0) {
        throw ModelError(path + ": tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set");
    }
    if (data.addEos && data.eos < 0) {
        throw ModelError(path + ": tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set");
    }
    data.chatTemplate = file.findString("tokenizer.chat_template").value_or("");
    return data;
}

}  // namespace zinc::model
