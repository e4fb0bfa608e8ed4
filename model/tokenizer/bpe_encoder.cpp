#include "model/tokenizer/bpe_encoder.h"

#include <algorithm>
#include <queue>
#include <string>

#include "model/model_error.h"
#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/pre_tokenizer.h"
#include "model/tokenizer/utf8.h"
#include "model/tokenizer/vocab.h"

namespace zinc::model {

namespace {

struct Symbol {
    int32_t prev;
    int32_t next;
    uint32_t start;
    uint32_t length;  // 0 once merged into its left neighbour
};

struct Bigram {
    int32_t left;
    int32_t right;
    int32_t rank;
    uint32_t length;  // of the merged text, to tell whether the pair is still current
};

// Lowest rank first; on equal ranks (the same merge at several places) the leftmost.
struct LowerPriority {
    bool operator()(const Bigram& a, const Bigram& b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

}  // namespace

BpeEncoder::BpeEncoder(const Vocab& vocab, std::string_view pre, int32_t unk)
    : vocab_(vocab), preTokenizer_(std::make_unique<PreTokenizer>(pre)), unk_(unk) {}

BpeEncoder::~BpeEncoder() = default;

void BpeEncoder::encode(std::string_view text, std::vector<int32_t>& out) const {
    // Symbol offsets are 32-bit and byte-level encoding can double the size of a word.
    if (text.size() > UINT32_MAX / 4) throw ModelError("BPE tokenizer: text longer than 1 GiB");
    const std::string valid = utf8::sanitize(text, utf8::Substitution::PerByte);
    for (std::string_view word : preTokenizer_->split(valid)) encodeWord(byte_level::encode(word), out);
}

void BpeEncoder::encodeWord(std::string_view word, std::vector<int32_t>& out) const {
    // Llama 3 style vocabularies take a word that is a token as it is, even when the merges
    // would build it differently (Hugging Face's ignore_merges).
    if (preTokenizer_->ignoreMerges()) {
        if (const int32_t id = vocab_.find(word); id >= 0) {
            out.push_back(id);
            return;
        }
    }
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    for (size_t pos = 0; pos < word.size();) {
        const size_t len = std::min(utf8::leadLength(static_cast<uint8_t>(word[pos])), word.size() - pos);
        const auto index = static_cast<int32_t>(symbols.size());
        symbols.push_back({index - 1, pos + len == word.size() ? -1 : index + 1, static_cast<uint32_t>(pos),
                           static_cast<uint32_t>(len)});
        pos += len;
    }

    std::priority_queue<Bigram, std::vector<Bigram>, LowerPriority> queue;
    std::string scratch;
    auto tryAddBigram = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols[left];
        const Symbol& r = symbols[right];
        const int32_t rank = vocab_.mergeRank(word.substr(l.start, l.length), word.substr(r.start, r.length), scratch);
        if (rank >= 0) queue.push({left, right, rank, l.length + r.length});
    };
    for (size_t i = 1; i < symbols.size(); ++i) tryAddBigram(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));

    while (!queue.empty()) {
        const Bigram b = queue.top();
        queue.pop();
        Symbol& left = symbols[b.left];
        Symbol& right = symbols[b.right];
        // A symbol only ever absorbs its right neighbour, so equal lengths mean the pair is
        // unchanged since it was queued (llama.cpp compares the texts; this is equivalent).
        if (left.length == 0 || right.length == 0 || left.length + right.length != b.length) continue;
        left.length += right.length;
        right.length = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = b.left;
        tryAddBigram(left.prev, b.left);
        tryAddBigram(b.left, left.next);
    }

    for (int32_t i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
        const Symbol& s = symbols[i];
        const std::string_view piece = word.substr(s.start, s.length);
        if (const int32_t id = vocab_.find(piece); id >= 0) {
            out.push_back(id);
            continue;
        }
        // A merge produced text the vocabulary lacks (a malformed vocabulary), or a character
        // is missing: fall back to the single characters, then to the unknown token.
        for (size_t pos = 0; pos < piece.size();) {
            const size_t len = std::min(utf8::leadLength(static_cast<uint8_t>(piece[pos])), piece.size() - pos);
            const int32_t id = vocab_.find(piece.substr(pos, len));
            if (id >= 0) {
                out.push_back(id);
            } else if (unk_ >= 0) {
                out.push_back(unk_);
            }
            pos += len;
        }
    }
}

}  // namespace zinc::model
