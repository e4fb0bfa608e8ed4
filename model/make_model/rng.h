#pragma once
// Counter-based randomness for make-model: every quant block draws from its own stream seeded
// by (seed, tensor index, block index), so blocks can be generated on any thread in any order
// and the file is still the same for a seed. SplitMix64 (Steele, Lea, Flood: "Fast splittable
// pseudorandom number generators", OOPSLA 2014) is small, fast and passes BigCrush.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace zinc::model::make_model {

inline uint64_t splitMix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

class BlockRng {
public:
    BlockRng(uint64_t seed, uint64_t tensorIndex, uint64_t blockIndex)
        : state_(splitMix64(splitMix64(splitMix64(seed) ^ tensorIndex) ^ blockIndex)) {}

    uint64_t next() {
        state_ += 0x9e3779b97f4a7c15ull;
        uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1).
    float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
    // Uniform in [lo, hi).
    float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
    // Uniform integer in [lo, hi].
    int uniformInt(int lo, int hi) { return lo + static_cast<int>((next() >> 32) % static_cast<uint64_t>(hi - lo + 1)); }
    // Approximately standard normal: the sum of four uniforms (Irwin-Hall), scaled to unit
    // variance. Bounded tails (|x| < 3.5) suit weights better than true Gaussian outliers.
    float normal() {
        const uint64_t r = next();
        const float sum = static_cast<float>((r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48));
        return (sum / 65536.0f - 2.0f) * 1.7320508f;  // variance of a U(0,1) sum of 4 is 1/3
    }
    // Fills n bytes with random bits (little-endian words; the file format is little-endian).
    void fillBytes(uint8_t* out, size_t n) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            const uint64_t r = next();
            std::memcpy(out + i, &r, 8);
        }
        if (i < n) {
            const uint64_t r = next();
            std::memcpy(out + i, &r, n - i);
        }
    }
    bool coin() { return next() >> 63; }

private:
    uint64_t state_;
};

}  // namespace zinc::model::make_model
