#include "tests/tokenizer/test_support.h"

#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "model/gguf/gguf_file.h"
#include "model/tokenizer/utf8.h"
#include "tests/test_paths.h"

namespace zinc::test {

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

std::vector<int32_t> parseIds(const std::string& line) {
    std::vector<int32_t> ids;
    std::istringstream in(line);
    for (long long v; in >> v;) ids.push_back(static_cast<int32_t>(v));
    return ids;
}

std::vector<VocabVector> readVocabVectors(const std::string& inpPath, const std::string& outPath) {
    const std::string raw = readFile(inpPath);
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> inputs;
    for (size_t pos = 0; pos < raw.size();) {
        const size_t next = raw.find(sep, pos);
        if (next == std::string::npos) {
            inputs.push_back(raw.substr(pos));
            break;
        }
        inputs.push_back(raw.substr(pos, next - pos));
        pos = next + sep.size();
    }
    std::ifstream out(outPath);
    if (!out) throw std::runtime_error("cannot open " + outPath);
    std::vector<std::string> lines;
    for (std::string line; std::getline(out, line);) lines.push_back(line);
    if (lines.size() != inputs.size()) {
        throw std::runtime_error(inpPath + " has " + std::to_string(inputs.size()) + " inputs but " + outPath +
                                 " has " + std::to_string(lines.size()) + " lines");
    }
    std::vector<VocabVector> vectors;
    for (size_t i = 0; i < inputs.size(); ++i) vectors.push_back({inputs[i], parseIds(lines[i])});
    return vectors;
}

GoldenPrompt readGoldenPrompt(const std::string& goldenPath) {
    std::ifstream in(goldenPath);
    if (!in) throw std::runtime_error("cannot open " + goldenPath);
    GoldenPrompt golden;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("text ", 0) == 0) {
            golden.hasText = true;
            golden.text = line.substr(5);
        } else if (line.rfind("prompt ", 0) == 0) {
            golden.prompt = parseIds(line.substr(7));
        }
    }
    return golden;
}

const model::Tokenizer& ggufTokenizer(const std::string& sharedRelativePath) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<model::Tokenizer>> cache;
    std::lock_guard lock(mutex);
    auto& slot = cache[sharedRelativePath];
    if (!slot) {
        const auto file = model::GgufFile::open(sharedPath(sharedRelativePath));
        slot = std::make_unique<model::Tokenizer>(model::TokenizerData::fromGguf(*file));
    }
    return *slot;
}

std::string mixedText(size_t bytes) {
    const std::string paragraph =
        "The quick brown fox jumps over the lazy dog. It's 2024; prices rose 3.5% (again!). "
        "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～ нещо на Български. "
        "    indented code: for (int i = 0; i < n; ++i) { sum += a[i]; }\n\n";
    std::string text;
    while (text.size() < bytes) text += paragraph;
    return text;
}

const model::TokenizerData& qwen3TokenizerData() {
    static const model::TokenizerData data = model::TokenizerData::fromHfTokenizerJson(
        sharedPath("models/qwen3-tokenizer/tokenizer.json.gz"), sharedPath("models/qwen3-tokenizer/tokenizer_config.json"));
    return data;
}

const model::Tokenizer& qwen3Tokenizer() {
    static const model::Tokenizer tokenizer(qwen3TokenizerData());
    return tokenizer;
}

bool isValidUtf8(const std::string& s) { return model::utf8::isValid(s); }

}  // namespace zinc::test
