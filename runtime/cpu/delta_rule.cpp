// The gated delta rule of one value head: the recurrence and the chunked (WY) form
// (runtime/cpu/delta_rule.h has the math). The chunked form's loops are axpy-shaped (a
// scalar times a row added to a row) so the compiler vectorises them without reassociation.
#include "runtime/cpu/delta_rule.h"

#include <algorithm>
#include <cmath>

namespace zinc::cpu {
namespace {

// Eight partial sums: the same order on every call, vectorisable as eight lanes.
float dot(const float* a, const float* b, int32_t n) {
    float acc[8] = {};
    int32_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int32_t l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
}

void axpy(float* __restrict y, float a, const float* __restrict x, int32_t n) {
    for (int32_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// The scratch of one chunk of at most `c` tokens, head dim d.
struct ChunkScratch {
    float *g, *a, *m, *u, *w, *st;
    ChunkScratch(std::vector<float>& s, int32_t c, int32_t d) {
        const auto cc = static_cast<size_t>(c), dd = static_cast<size_t>(d);
        s.resize(cc + 2 * cc * cc + 2 * cc * dd + dd * dd);
        g = s.data();        // [t] G_t
        a = g + cc;          // [t][s] A, strictly lower
        m = a + cc * cc;     // [t][s] M ∘ Q Kᵀ, lower with the diagonal
        u = m + cc * cc;     // [t][j] Ũ, then U
        w = u + cc * dd;     // [t][i] W
        st = w + cc * dd;    // [i][j] S0ᵀ
    }
};

// One chunk of n tokens starting at token t0.
void chunk(const DeltaHeadRun& r, int32_t t0, int32_t n, int32_t c, float* state, const ChunkScratch& x) {
    const int32_t d = r.d;
    const auto dd = static_cast<size_t>(d), cc = static_cast<size_t>(c);
    auto q = [&](int32_t t) { return r.q + static_cast<size_t>(t0 + t) * r.qStride; };
    auto k = [&](int32_t t) { return r.k + static_cast<size_t>(t0 + t) * r.kStride; };
    float sum = 0.0f;
    for (int32_t t = 0; t < n; ++t) x.g[t] = sum += r.logDecay[t0 + t];
    // A and M from K Kᵀ and Q Kᵀ (lower triangles only).
    for (int32_t t = 0; t < n; ++t)
        for (int32_t s = 0; s <= t; ++s) {
            const float e = std::exp(x.g[t] - x.g[s]);
            x.m[t * cc + s] = e * dot(q(t), k(s), d);
            if (s < t) x.a[t * cc + s] = r.beta[t0 + t] * e * dot(k(t), k(s), d);
        }
    // Forward substitution: Ũ = (I + A)⁻¹ diag(β) V, W = (I + A)⁻¹ diag(β e^G) K.
    for (int32_t t = 0; t < n; ++t) {
        float* ut = x.u + t * dd;
        float* wt = x.w + t * dd;
        const float b = r.beta[t0 + t], bg = b * std::exp(x.g[t]);
        const float* v = r.v + static_cast<size_t>(t0 + t) * r.vStride;
        for (int32_t i = 0; i < d; ++i) {
            ut[i] = b * v[i];
            wt[i] = bg * k(t)[i];
        }
        for (int32_t s = 0; s < t; ++s) {
            axpy(ut, -x.a[t * cc + s], x.u + s * dd, d);
            axpy(wt, -x.a[t * cc + s], x.w + s * dd, d);
        }
    }
    for (int32_t j = 0; j < d; ++j)
        for (int32_t i = 0; i < d; ++i) x.st[i * dd + j] = state[j * dd + i];
    // U = Ũ - W S0ᵀ
    for (int32_t t = 0; t < n; ++t)
        for (int32_t i = 0; i < d; ++i) axpy(x.u + t * dd, -x.w[t * dd + i], x.st + i * dd, d);
    // O = diag(e^G) Q S0ᵀ + (M ∘ Q Kᵀ) U
    for (int32_t t = 0; t < n; ++t) {
        float* o = r.out + static_cast<size_t>(t0 + t) * r.outStride;
        std::fill_n(o, d, 0.0f);
        for (int32_t i = 0; i < d; ++i) axpy(o, q(t)[i], x.st + i * dd, d);
        const float gt = std::exp(x.g[t]);
        for (int32_t j = 0; j < d; ++j) o[j] *= gt;
        for (int32_t s = 0; s <= t; ++s) axpy(o, x.m[t * cc + s], x.u + s * dd, d);
    }
    // S' = e^G_n S0 + Uᵀ diag(e^(G_n - G)) K; U's columns scaled first (into W, now free).
    const float gn = x.g[n - 1];
    for (int32_t s = 0; s < n; ++s) {
        const float e = std::exp(gn - x.g[s]);
        for (int32_t j = 0; j < d; ++j) x.w[j * cc + s] = x.u[s * dd + j] * e;  // [j][s]
    }
    const float decay = std::exp(gn);
    for (int32_t j = 0; j < d; ++j) {
        float* row = state + j * dd;
        for (int32_t i = 0; i < d; ++i) row[i] *= decay;
        for (int32_t s = 0; s < n; ++s) axpy(row, x.w[j * cc + s], k(s), d);
    }
}

}  // namespace

void deltaRuleRecurrent(const DeltaHeadRun& r, float* s) {
    const int32_t d = r.d;
    for (int32_t t = 0; t < r.tokens; ++t) {
        const float* q = r.q + static_cast<size_t>(t) * r.qStride;
        const float* k = r.k + static_cast<size_t>(t) * r.kStride;
        const float* v = r.v + static_cast<size_t>(t) * r.vStride;
        float* o = r.out + static_cast<size_t>(t) * r.outStride;
        const float decay = std::exp(r.logDecay[t]);
        const float beta = r.beta[t];
        for (int32_t j = 0; j < d; ++j) {  // row j of S: value dim j over the key dims
            float* row = s + static_cast<size_t>(j) * static_cast<size_t>(d);
            float sk = 0.0f;
            for (int32_t i = 0; i < d; ++i) sk += (row[i] *= decay) * k[i];
            const float delta = (v[j] - sk) * beta;
            float out = 0.0f;
            for (int32_t i = 0; i < d; ++i) out += (row[i] += k[i] * delta) * q[i];
            o[j] = out;
        }
    }
}

void deltaRuleChunked(const DeltaHeadRun& run, int32_t c, float* state, std::vector<float>& scratch) {
    // W is reused as Uᵀ [j][s] at the end: it needs d x c floats, as many as c x d.
    const ChunkScratch x(scratch, c, run.d);
    for (int32_t t0 = 0; t0 < run.tokens; t0 += c) chunk(run, t0, std::min(c, run.tokens - t0), c, state, x);
}

}  // namespace zinc::cpu
