#include "model/tokenizer/spm_encoder.h"

#include <algorithm>
#include <cstdio>
#include <queue>
#include <string>

#include "model/model_error.h"
#include "model/tokenizer/utf8.h"
#include "model/tokenizer/vocab.h"

namespace zinc::model {

namespace {

struct SpmSymbol {
    int32_t prev;
    int32_t next;
    uint32_t start;
    uint32_t length;  // 0 once merged into its left neighbour
};

struct SpmBigram {
    int32_t left;
    int32_t right;
    float score;
    uint32_t length;  // of the merged text, to tell whether the pair is still current
};

// Highest score first; on equal scores the leftmost pair, which makes merging deterministic
// and identical to llama.cpp (and to SentencePiece's own BPE mode).
struct SpmLowerPriority {
    bool operator()(const SpmBigram& a, const SpmBigram& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

class SpmSession {
public:
    SpmSession(const Vocab& vocab, std::string_view text) : vocab_(vocab), text_(text) {}

    void run(int32_t unk, std::vector<int32_t>& out) {
        splitCharacters();
        for (size_t i = 1; i < symbols_.size(); ++i) tryAddBigram(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
        while (!queue_.empty()) {
            const SpmBigram b = queue_.top();
            queue_.pop();
            SpmSymbol& left = symbols_[b.left];
            SpmSymbol& right = symbols_[b.right];
            // Stale entry: one side was merged away or grew since the pair was queued.
            if (left.length == 0 || right.length == 0 || left.length + right.length != b.length) continue;
            left.length += right.length;
            right.length = 0;
            left.next = right.next;
            if (right.next >= 0) symbols_[right.next].prev = b.left;
            tryAddBigram(left.prev, b.left);
            tryAddBigram(b.left, left.next);
        }
        for (int32_t i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next) emit(symbols_[i], unk, out);
    }

private:
    void splitCharacters() {
        symbols_.reserve(text_.size());
        size_t pos = 0;
        while (pos < text_.size()) {
            const size_t len = std::min(utf8::leadLength(static_cast<uint8_t>(text_[pos])), text_.size() - pos);
            const auto index = static_cast<int32_t>(symbols_.size());
            symbols_.push_back({index - 1, pos + len == text_.size() ? -1 : index + 1,
                                static_cast<uint32_t>(pos), static_cast<uint32_t>(len)});
            pos += len;
        }
    }

    void tryAddBigram(int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const uint32_t length = symbols_[left].length + symbols_[right].length;
        const int32_t id = vocab_.find(text_.substr(symbols_[left].start, length));
        if (id < 0) return;
        queue_.push({left, right, vocab_.score(id), length});
    }

    void emit(const SpmSymbol& s, int32_t unk, std::vector<int32_t>& out) const {
        const std::string_view piece = text_.substr(s.start, s.length);
        // Merged symbols are always tokens (pairs are only queued when they are); what is left
        // is a single character the vocabulary lacks.
        if (const int32_t id = vocab_.find(piece); id >= 0) {
            out.push_back(id);
            return;
        }
        for (char c : piece) {
            const auto byte = static_cast<uint8_t>(c);
            int32_t id = vocab_.byteToken(byte);
            if (id < 0) id = unk;
            if (id < 0) {
                char hex[8];
                std::snprintf(hex, sizeof(hex), "0x%02X", byte);
                throw ModelError(std::string("SPM tokenizer has neither a byte token <") + hex +
                                 "> nor an unknown token for byte " + hex);
            }
            out.push_back(id);
        }
    }

    const Vocab& vocab_;
    std::string_view text_;
    std::vector<SpmSymbol> symbols_;
    std::priority_queue<SpmBigram, std::vector<SpmBigram>, SpmLowerPriority> queue_;
};

}  // namespace

void spmEncode(const Vocab& vocab, std::string_view text, int32_t unk, std::vector<int32_t>& out) {
    if (text.size() > UINT32_MAX) throw ModelError("SPM tokenizer: text longer than 4 GiB");
    SpmSession(vocab, text).run(unk, out);
}

}  // namespace zinc::model
