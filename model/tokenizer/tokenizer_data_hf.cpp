// TokenizerData::fromHfTokenizerJson: imports a Hugging Face tokenizer.json (+ optional
// tokenizer_config.json) into the same shape the GGUF keys have, following what llama.cpp's
// convert_hf_to_gguf.py writes for the byte-level BPE families this runtime supports.
#include <nlohmann/json.hpp>

#include <optional>
#include <unordered_map>

#include "model/model_error.h"
#include "model/tokenizer/pre_tokenizer.h"
#include "model/tokenizer/text_file.h"
#include "model/tokenizer/tokenizer_data.h"

namespace zinc::model {

namespace {

using nlohmann::json;

// Ids are used as vector indices; a hostile file must not make us allocate gigabytes.
constexpr int64_t kMaxTokenId = 1 << 24;

json parseJsonFile(const std::string& path) {
    const std::string text = readMaybeGzipFile(path);
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        throw ModelError(path + ": invalid JSON: " + e.what());
    }
}

// Flattens a pre_tokenizer (possibly a Sequence) into its steps.
void collectSteps(const json& node, std::vector<const json*>& steps) {
    if (!node.is_object()) return;
    if (node.value("type", "") == "Sequence" && node.contains("pretokenizers")) {
        for (const json& child : node["pretokenizers"]) collectSteps(child, steps);
        return;
    }
    steps.push_back(&node);
}

std::string detectPre(const std::string& path, const json& root) {
    std::vector<const json*> steps;
    if (root.contains("pre_tokenizer")) collectSteps(root["pre_tokenizer"], steps);
    const json* byteLevel = nullptr;
    std::vector<std::string> splitRegexes;
    for (const json* step : steps) {
        const std::string type = step->value("type", "");
        if (type == "ByteLevel") {
            byteLevel = step;
        } else if (type == "Split") {
            const json& pattern = step->value("pattern", json::object());
            if (pattern.contains("Regex") && pattern["Regex"].is_string()) {
                splitRegexes.push_back(pattern["Regex"].get<std::string>());
            } else {
                throw ModelError(path + ": unsupported pre_tokenizer Split pattern " + pattern.dump());
            }
        } else {
            throw ModelError(path + ": unsupported pre_tokenizer step '" + type +
                             "'; only byte-level BPE (ByteLevel, optionally after one Split regex) is supported");
        }
    }
    if (!byteLevel) {
        throw ModelError(path + ": pre_tokenizer has no ByteLevel step; only byte-level BPE tokenizers are supported");
    }
    if (splitRegexes.size() > 1) {
        throw ModelError(path + ": pre_tokenizer has " + std::to_string(splitRegexes.size()) +
                         " Split regexes; only one (GPT-2, Llama 3 or Qwen2 style) is supported");
    }
    if (splitRegexes.size() == 1) {
        if (auto pre = preNameForHfRegex(splitRegexes[0])) return *pre;
        throw ModelError(path + ": unsupported pre-tokenizer regex " + json(splitRegexes[0]).dump() +
                         "; known: GPT-2, Llama 3 (llama-bpe), Qwen2, Qwen3.5");
    }
    if (byteLevel->value("use_regex", true)) return "gpt-2";
    throw ModelError(path + ": ByteLevel pre_tokenizer without a regex: the words to merge in are undefined");
}

void checkNormalizer(const std::string& path, const json& root) {
    if (!root.contains("normalizer") || root["normalizer"].is_null()) return;
    const json& n = root["normalizer"];
    const std::string type = n.value("type", "");
    // NFC is accepted and not applied: llama.cpp does not apply it either (GGUF has no key
    // for it), so both import routes tokenize alike. It changes none of the qwen2 vectors.
    if (type == "NFC") return;
    if (type == "Sequence" && n.value("normalizers", json::array()).empty()) return;
    throw ModelError(path + ": unsupported normalizer " + n.dump());
}

// Added tokens that should be control tokens although the file does not mark them special;
// the same rule convert_hf_to_gguf.py applies (does_token_look_special).
bool looksSpecial(const std::string& text) {
    auto wrapped = [&](std::string_view open, std::string_view close) {
        return text.size() >= open.size() + close.size() && text.compare(0, open.size(), open) == 0 &&
               text.compare(text.size() - close.size(), close.size(), close) == 0;
    };
    return wrapped("<|", "|>") || wrapped("<\xEF\xBD\x9C", "\xEF\xBD\x9C>");  // <|...|>, <｜...｜>
}

int32_t tokenIdFromJson(const std::string& path, const json& id, const std::string& what) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= kMaxTokenId) {
        throw ModelError(path + ": " + what + " has an invalid id " + id.dump());
    }
    return static_cast<int32_t>(id.get<int64_t>());
}

// bos_token etc. in tokenizer_config.json: a string, {"content": "..."} or null.
std::optional<std::string> configTokenText(const std::string& path, const json& config, const char* key) {
    if (!config.contains(key) || config[key].is_null()) return std::nullopt;
    const json& v = config[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    throw ModelError(path + ": " + key + " is neither a string nor {\"content\": ...}");
}

std::string chatTemplateFromConfig(const std::string& path, const json& config) {
    if (!config.contains("chat_template") || config["chat_template"].is_null()) return {};
    const json& t = config["chat_template"];
    if (t.is_string()) return t.get<std::string>();
    // Newer files list named templates; the unnamed use is "default".
    if (t.is_array()) {
        for (const json& entry : t) {
            if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
                entry["template"].is_string()) {
                return entry["template"].get<std::string>();
            }
        }
        return {};
    }
    throw ModelError(path + ": chat_template is neither a string nor a list of named templates");
}

}  // namespace

TokenizerData TokenizerData::fromHfTokenizerJson(const std::string& tokenizerJsonPath,
                                                 const std::string& tokenizerConfigPath) {
    const std::string& path = tokenizerJsonPath;
    const json root = parseJsonFile(path);
    if (!root.is_object() || !root.contains("model") || !root["model"].is_object()) {
        throw ModelError(path + ": not a tokenizer.json (no \"model\" object)");
    }
    const json& model = root["model"];
    const std::string modelType = model.value("type", "BPE");
    if (modelType != "BPE") {
        throw ModelError(path + ": unsupported tokenizer model type '" + modelType + "'; supported: byte-level BPE");
    }
    checkNormalizer(path, root);

    TokenizerData data;
    data.kind = TokenizerKind::Bpe;
    data.addSpacePrefix = false;
    data.pre = detectPre(path, root);

    // Vocabulary and added tokens, by id.
    if (!model.contains("vocab") || !model["vocab"].is_object()) throw ModelError(path + ": model.vocab is missing");
    std::vector<std::optional<std::pair<std::string, TokenType>>> byId;
    auto place = [&](int32_t id, std::string text, TokenType type) {
        if (static_cast<size_t>(id) >= byId.size()) byId.resize(static_cast<size_t>(id) + 1);
        auto& slot = byId[id];
        if (slot && slot->first != text) {
            throw ModelError(path + ": id " + std::to_string(id) + " is both '" + slot->first + "' and '" + text + "'");
        }
        slot.emplace(std::move(text), type);
    };
    for (const auto& [text, id] : model["vocab"].items()) {
        place(tokenIdFromJson(path, id, "model.vocab['" + text + "']"), text, TokenType::Normal);
    }
    if (root.contains("added_tokens") && root["added_tokens"].is_array()) {
        for (const json& added : root["added_tokens"]) {
            if (!added.is_object() || !added.contains("content") || !added["content"].is_string()) {
                throw ModelError(path + ": added_tokens entry without content: " + added.dump());
            }
            const std::string text = added["content"].get<std::string>();
            const int32_t id = tokenIdFromJson(path, added.value("id", json()), "added token '" + text + "'");
            const bool special = added.value("special", false) || looksSpecial(text);
            place(id, text, special ? TokenType::Control : TokenType::UserDefined);
        }
    }
    data.tokens.reserve(byId.size());
    data.tokenTypes.reserve(byId.size());
    for (size_t id = 0; id < byId.size(); ++id) {
        if (byId[id]) {
            data.tokens.push_back(std::move(byId[id]->first));
            data.tokenTypes.push_back(static_cast<int32_t>(byId[id]->second));
        } else {
            // Holes get placeholder texts, as the GGUF converter writes them.
            data.tokens.push_back("[PAD" + std::to_string(id) + "]");
            data.tokenTypes.push_back(static_cast<int32_t>(TokenType::Unused));
        }
    }
    if (data.tokens.empty()) throw ModelError(path + ": model.vocab is empty");

    // Merges: "left right" strings (older files) or ["left", "right"] pairs (newer ones).
    if (!model.contains("merges") || !model["merges"].is_array()) throw ModelError(path + ": model.merges is missing");
    data.merges.reserve(model["merges"].size());
    for (const json& merge : model["merges"]) {
        if (merge.is_string()) {
            data.merges.push_back(merge.get<std::string>());
        } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
            data.merges.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
        } else {
            throw ModelError(path + ": model.merges entry " + merge.dump() + " is not 'a b' or [\"a\", \"b\"]");
        }
    }

    std::unordered_map<std::string_view, int32_t> idOf;
    idOf.reserve(data.tokens.size());
    for (size_t i = 0; i < data.tokens.size(); ++i) idOf.emplace(data.tokens[i], static_cast<int32_t>(i));

    // A Llama 3 style post-processor names the BOS it prepends.
    const auto preSpec = preTokenizerSpec(data.pre);
    data.addBos = false;
    if (root.contains("post_processor") && root["post_processor"].is_object() &&
        root["post_processor"].value("type", "") == "TemplateProcessing") {
        const json single = root["post_processor"].value("single", json::array());
        if (single.is_array() && !single.empty() && single[0].contains("SpecialToken")) {
            const std::string text = single[0]["SpecialToken"].value("id", "");
            if (const auto it = idOf.find(text); it != idOf.end()) {
                data.bos = it->second;
                data.addBos = true;
            }
        }
    }

    if (!tokenizerConfigPath.empty()) {
        const json config = parseJsonFile(tokenizerConfigPath);
        if (!config.is_object()) throw ModelError(tokenizerConfigPath + ": not a JSON object");
        const std::pair<const char*, int32_t*> keys[] = {
            {"bos_token", &data.bos}, {"eos_token", &data.eos}, {"unk_token", &data.unk}, {"pad_token", &data.pad}};
        for (const auto& [key, id] : keys) {
            const auto text = configTokenText(tokenizerConfigPath, config, key);
            if (!text) continue;
            const auto it = idOf.find(*text);
            if (it == idOf.end()) {
                throw ModelError(tokenizerConfigPath + ": " + key + " '" + *text + "' is not a token of " + path);
            }
            *id = it->second;
        }
        if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) {
            data.addBos = config["add_bos_token"].get<bool>();
        } else if (preSpec && preSpec->addBosByDefault && data.bos >= 0) {
            data.addBos = true;
        }
        if (config.contains("add_eos_token") && config["add_eos_token"].is_boolean()) {
            data.addEos = config["add_eos_token"].get<bool>();
        }
        data.chatTemplate = chatTemplateFromConfig(tokenizerConfigPath, config);
    }
    const std::string& configOrJson = tokenizerConfigPath.empty() ? path : tokenizerConfigPath;
    if (data.addBos && data.bos < 0) throw ModelError(configOrJson + ": add_bos_token is true, but there is no bos_token");
    if (data.addEos && data.eos < 0) throw ModelError(configOrJson + ": add_eos_token is true, but there is no eos_token");
    return data;
}

}  // namespace zinc::model
