#pragma once
// The gated delta rule of one value head over a run of tokens, two ways that give the same
// state and outputs (to float rounding; tests/cpu/delta_rule_test.cpp measures how close):
//
// - the recurrence, token by token (the reference): S = e^g S;  S += β (v - S k) kᵀ;  o = S q
// - the chunked form (as llama.cpp's and flash-linear-attention's chunked gated delta rule):
//   within a chunk of n tokens, with G_t = g_1 + … + g_t (cumulative log decay) and S0 the
//   state entering the chunk, the values written, U (n x d, row t = β_t (v_t - e^g_t S_{t-1} k_t)),
//   solve the unit lower-triangular system (the WY / UT representation)
//       (I + A) U = diag(β) V - diag(β e^G) K S0ᵀ,   A[t][s] = β_t e^(G_t - G_s) k_t·k_s  (s < t)
//   so U = Ũ - W S0ᵀ with Ũ = (I + A)⁻¹ diag(β) V and W = (I + A)⁻¹ diag(β e^G) K; then
//       O  = diag(e^G) Q S0ᵀ + (M ∘ Q Kᵀ) U,   M[t][s] = e^(G_t - G_s) (s <= t), else 0
//       S' = e^G_n S0 + Uᵀ diag(e^(G_n - G)) K
//   Everything but the n-step substitution is a matrix product; e^(G_t - G_s) is taken from
//   the difference (never 1 / e^G_s), so strong decay underflows to 0 instead of overflowing.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zinc::cpu {

// One value head's inputs and outputs over `tokens` tokens; q, k, v and out rows lie their
// stride in floats apart.
struct DeltaHeadRun {
    int32_t tokens = 0;
    int32_t d = 0;              // key and value head dim
    const float* q = nullptr;   // l2-normalised, then scaled by 1/√d
    const float* k = nullptr;   // l2-normalised
    const float* v = nullptr;
    size_t qStride = 0, kStride = 0, vStride = 0;
    const float* logDecay = nullptr;  // [t] g_t: the decay is e^g_t (g_t <= 0)
    const float* beta = nullptr;      // [t] the write strength, after the sigmoid
    float* out = nullptr;             // [t] o_t, d floats
    size_t outStride = 0;
};

// state: d x d, row j = value dim j over the key dims (S[j][i] at j * d + i); updated in place.
void deltaRuleRecurrent(const DeltaHeadRun& run, float* state);

// The same in chunks of `chunk` tokens (the last may be shorter); `scratch` grows as needed.
void deltaRuleChunked(const DeltaHeadRun& run, int32_t chunk, float* state, std::vector<float>& scratch);

}  // namespace zinc::cpu
