#pragma once
// Open-addressing hash tables for the two lookups on the tokenizer's hot paths (text -> id,
// merge pair -> rank). std::unordered_map allocates a node per entry; with 150k-entry Qwen
// vocabularies building those took ~180 ms of cache misses, these flat tables a fraction.
// Both only grow by insert during construction and are read-only afterwards.
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zinc::model {

// Maps a text to the id of the entry in `texts` that equals it. Stores ids only; the texts
// stay in the caller's vector, which must outlive the index and not change.
class TextIdIndex {
public:
    void reset(size_t capacity) {
        const size_t n = std::bit_ceil(capacity * 2 + 16);
        slots_.assign(n, Slot{});
        mask_ = n - 1;
    }

    // Returns the id already stored for this text, or stores `id` and returns it.
    int32_t insert(std::string_view text, int32_t id, const std::vector<std::string>& texts) {
        const uint64_t h = hashOf(text);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.id < 0) {
                s = {static_cast<uint32_t>(h >> 32), id};
                return id;
            }
            if (s.hash == static_cast<uint32_t>(h >> 32) && texts[s.id] == text) return s.id;
        }
    }

    int32_t find(std::string_view text, const std::vector<std::string>& texts) const {
        if (slots_.empty()) return -1;
        const uint64_t h = hashOf(text);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.id < 0) return -1;
            if (s.hash == static_cast<uint32_t>(h >> 32) && texts[s.id] == text) return s.id;
        }
    }

private:
    struct Slot {
        uint32_t hash = 0;  // upper half of the hash: most mismatches fail without a string compare
        int32_t id = -1;
    };
    static uint64_t hashOf(std::string_view s) { return std::hash<std::string_view>{}(s) * 0x9E3779B97F4A7C15ull; }

    std::vector<Slot> slots_;
    size_t mask_ = 0;
};

// Maps a pair of token ids to a rank; the first insert of a pair wins.
class PairRankIndex {
public:
    void reset(size_t capacity) {
        const size_t n = std::bit_ceil(capacity * 2 + 16);
        slots_.assign(n, Slot{});
        mask_ = n - 1;
    }

    void insert(int32_t left, int32_t right, int32_t rank) {
        const uint64_t key = keyOf(left, right);
        for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.rank < 0) {
                s = {key, rank};
                return;
            }
            if (s.key == key) return;
        }
    }

    int32_t find(int32_t left, int32_t right) const {
        if (slots_.empty()) return -1;
        const uint64_t key = keyOf(left, right);
        for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.rank < 0) return -1;
            if (s.key == key) return s.rank;
        }
    }

private:
    struct Slot {
        uint64_t key = 0;
        int32_t rank = -1;
    };
    static uint64_t keyOf(int32_t left, int32_t right) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    }
    // splitmix64's finaliser: spreads the two small ids over all bits.
    static uint64_t mix(uint64_t x) {
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        return x ^ (x >> 31);
    }

    std::vector<Slot> slots_;
    size_t mask_ = 0;
};

}  // namespace zinc::model
