#define PCRE2_CODE_UNIT_WIDTH 8
#include "model/tokenizer/pre_tokenizer.h"

#include <pcre2.h>

#include "model/model_error.h"

namespace zinc::model {

namespace {

// OpenAI GPT-2's pattern, as Hugging Face's ByteLevel pre-tokenizer applies it.
constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Llama 3 and Qwen2 write the contractions case-insensitively, (?i:'s|...). Under Unicode
// case folding that would also match U+017F (long s) and U+212A (Kelvin sign) for s and k;
// llama.cpp spells the cases out instead, and so do we, to tokenize exactly as it does.
constexpr std::string_view kLlama3Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen3.5 keeps combining marks (\p{M}) with the letters they modify.
constexpr std::string_view kQwen35Regex =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The patterns as they appear in tokenizer.json files (Split pre-tokenizer), for detection.
constexpr std::string_view kHfLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kHfQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kHfQwen35Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace

std::optional<PreTokenizerSpec> preTokenizerSpec(std::string_view pre) {
    if (pre == "default" || pre == "gpt-2") return PreTokenizerSpec{std::string(kGpt2Regex), false, false};
    if (pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe") {
        // llama.cpp takes whole words that are tokens (HF's ignore_merges) and adds BOS.
        return PreTokenizerSpec{std::string(kLlama3Regex), true, true};
    }
    if (pre == "qwen2") return PreTokenizerSpec{std::string(kQwen2Regex), false, false};
    if (pre == "qwen35") return PreTokenizerSpec{std::string(kQwen35Regex), false, false};
    return std::nullopt;
}

std::optional<std::string> preNameForHfRegex(std::string_view regex) {
    if (regex == kHfQwen2Regex || regex == kQwen2Regex) return "qwen2";
    if (regex == kHfQwen35Regex || regex == kQwen35Regex) return "qwen35";
    if (regex == kHfLlama3Regex || regex == kLlama3Regex) return "llama-bpe";
    if (regex == kGpt2Regex || regex == kGpt2Regex.substr(0, kGpt2Regex.size() - 4)) return "gpt-2";
    return std::nullopt;
}

struct PreTokenizer::Compiled {
    pcre2_code* code = nullptr;
    ~Compiled() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(std::string_view pre) : compiled_(std::make_unique<Compiled>()), pre_(pre) {
    auto spec = preTokenizerSpec(pre);
    if (!spec) {
        throw ModelError("unsupported pre-tokenizer '" + std::string(pre) +
                         "' (tokenizer.ggml.pre); supported: default, gpt-2, llama3, llama-v3, llama-bpe, qwen2, qwen35");
    }
    spec_ = std::move(*spec);
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(spec_.regex.data()), spec_.regex.size(),
                                    PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &errorCode, &errorOffset, nullptr);
    if (!compiled_->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(errorCode, msg, sizeof(msg));
        throw ModelError("pre-tokenizer '" + pre_ + "': regex does not compile at offset " +
                         std::to_string(errorOffset) + ": " + reinterpret_cast<const char*>(msg));
    }
    // JIT makes splitting several times faster; without it (unsupported CPU) the interpreter
    // gives the same matches, so a failure here is not an error.
    pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
    std::vector<std::string_view> pieces;
    if (text.empty()) return pieces;
    // Match data per call keeps split() safe to call from several threads at once.
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
        pcre2_match_data_create_from_pattern(compiled_->code, nullptr), &pcre2_match_data_free);
    if (!match) throw ModelError("pre-tokenizer '" + pre_ + "': out of memory");
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t pos = 0;
    size_t unmatchedFrom = 0;
    while (pos < text.size()) {
        // The text was validated once by the caller; re-checking it at every offset would make
        // splitting quadratic.
        int rc = pcre2_match(compiled_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
            // The JIT's fixed stack ran out on some extreme input: the interpreter, which keeps
            // its backtracking state on the heap, gives the same match.
            rc = pcre2_match(compiled_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, match.get(),
                             nullptr);
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof(msg));
            throw ModelError("pre-tokenizer '" + pre_ + "': regex match failed at byte " + std::to_string(pos) +
                             ": " + reinterpret_cast<const char*>(msg));
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
        const size_t start = ovector[0];
        const size_t end = ovector[1];
        if (end == start) {
            // None of the known patterns match empty text; step over one character anyway so a
            // future pattern that can cannot loop forever.
            pos = start + 1;
            while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
            continue;
        }
        if (start > unmatchedFrom) pieces.push_back(text.substr(unmatchedFrom, start - unmatchedFrom));
        pieces.push_back(text.substr(start, end - start));
        pos = end;
        unmatchedFrom = end;
    }
    if (unmatchedFrom < text.size()) pieces.push_back(text.substr(unmatchedFrom));
    return pieces;
}

}  // namespace zinc::model
