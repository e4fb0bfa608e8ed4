// Arbitrary bytes through every tokenizer of ../shared: encoded (with and without special-token
// parsing), decoded whole and streamed; or read as token ids and decoded. Besides "no crash",
// each input checks the promises tokenizer.h makes:
//  - encoded ids are inside the vocabulary;
//  - byte-level BPE decodes to valid UTF-8;
//  - valid UTF-8 text survives decode(encode(text)) (SPM: unless it holds U+2581, the character
//    SPM writes for a space, which decodes as a space, or a user-defined token: text after one
//    gets SPM's space prefix, as llama.cpp's tokenizer does; tests/tokenizer pins that);
//  - every chunk StreamingDecoder returns is valid UTF-8, and the chunks add up to decode()
//    whenever that is valid UTF-8.
// The first input byte chooses the tokenizer and the flags; the rest is the text (or the ids).
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/tokenizer/tokenizer.h"
#include "model/tokenizer/utf8.h"
#include "tests/fuzz/fuzz_support.h"

using namespace zinc::model;

namespace {

std::unique_ptr<Tokenizer> fromGguf(const std::string& relative) {
    const auto file = GgufFile::open(zinc::fuzz::sharedPath(relative));
    return std::make_unique<Tokenizer>(TokenizerData::fromGguf(*file));
}

const std::vector<std::unique_ptr<Tokenizer>>& tokenizers() {
    static const auto all = [] {
        std::vector<std::unique_ptr<Tokenizer>> t;
        t.push_back(fromGguf("models/stories260K.gguf"));                               // SPM, 512
        t.push_back(fromGguf("models/llama.cpp-vocab/ggml-vocab-llama-spm.gguf"));      // SPM, 32000
        t.push_back(fromGguf("models/llama.cpp-vocab/ggml-vocab-phi-3.gguf"));          // SPM + user-defined
        t.push_back(fromGguf("models/llama.cpp-vocab/ggml-vocab-gpt-2.gguf"));          // BPE gpt-2
        t.push_back(fromGguf("models/qwen3-tiny.gguf"));                                // BPE, 1024
        t.push_back(std::make_unique<Tokenizer>(TokenizerData::fromHfTokenizerJson(     // BPE qwen2, 151k
            zinc::fuzz::sharedPath("models/qwen3-tokenizer/tokenizer.json.gz"),
            zinc::fuzz::sharedPath("models/qwen3-tokenizer/tokenizer_config.json"))));
        return t;
    }();
    return all;
}

[[noreturn]] void finding(const char* what, const std::string& detail = {}) {
    std::fprintf(stderr, "fuzz_tokenizer: %s %s\n", what, detail.c_str());
    std::abort();
}

// Streams ids and checks the chunks; returns their concatenation.
std::string stream(const Tokenizer& tok, const std::vector<int32_t>& ids, bool skipSpecial) {
    StreamingDecoder decoder(tok, skipSpecial);
    std::string all;
    for (int32_t id : ids) {
        const std::string chunk = decoder.push(id);
        if (!utf8::isValid(chunk)) finding("invalid UTF-8 chunk after id", std::to_string(id));
        all += chunk;
    }
    const std::string rest = decoder.finish();
    if (!utf8::isValid(rest)) finding("invalid UTF-8 from finish()");
    return all + rest;
}

void checkDecoders(const Tokenizer& tok, const std::vector<int32_t>& ids, bool skipSpecial) {
    const std::string whole = tok.decode(ids, skipSpecial);
    const std::string streamed = stream(tok, ids, skipSpecial);
    if (utf8::isValid(whole) && streamed != whole) finding("streamed text differs from decode()");
    for (int32_t id : ids) (void)tok.tokenToPiece(id, skipSpecial);
}

void checkEncode(const Tokenizer& tok, std::string_view text, bool addSpecial, bool parseSpecial) {
    const std::vector<int32_t> ids = tok.encode(text, addSpecial, parseSpecial);
    for (int32_t id : ids)
        if (id < 0 || id >= tok.vocabSize()) finding("id outside the vocabulary:", std::to_string(id));
    const std::string decoded = tok.decode(ids, true);
    if (tok.kind() == TokenizerKind::Bpe && !utf8::isValid(decoded)) finding("BPE decoded to invalid UTF-8");
    bool specialInside = false;  // without parseSpecial only user-defined tokens are split out
    for (int32_t id : ids) specialInside |= tok.tokenType(id) == TokenType::UserDefined;
    const bool roundTrips = !parseSpecial && utf8::isValid(text) &&
                            (tok.kind() == TokenizerKind::Bpe ||
                             (!specialInside && text.find("\xE2\x96\x81") == std::string_view::npos));
    if (roundTrips && decoded != text) finding("decode(encode(text)) != text; decoded:", decoded);
    checkDecoders(tok, ids, true);
}

}  // namespace

// Loading the 151k-token Qwen3 tokenizer takes seconds under ASan: done before the first
// input, so that it does not count as a slow one.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    (void)tokenizers();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const auto& all = tokenizers();
    const uint8_t mode = data[0];
    const Tokenizer& tok = *all[(mode & 7) % all.size()];
    const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    if (mode & 0x20) {
        std::vector<int32_t> ids(rest.size() / 4);
        if (!ids.empty()) std::memcpy(ids.data(), rest.data(), ids.size() * 4);
        // Mostly ids near the vocabulary, some anywhere: the top bit of mode says which.
        if (!(mode & 0x80))
            for (int32_t& id : ids) id = int32_t(uint32_t(id) % uint32_t(tok.vocabSize() + 2)) - 1;
        checkDecoders(tok, ids, (mode & 0x40) != 0);
        return 0;
    }
    checkEncode(tok, rest, (mode & 0x08) != 0, (mode & 0x10) != 0);
    return 0;
}
