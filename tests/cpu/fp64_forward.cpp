#include "tests/cpu/fp64_forward.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "model/model.h"
#include "model/quant/dequantize.h"
#include "model/quant/fp16.h"
#include "model/quant/quantize_activations.h"

namespace zinc::test {
namespace {

using Vec = std::vector<double>;

// A weight as doubles, row-major [rows][cols] (ggml: ne[0] = cols contiguous).
struct Matrix {
    int64_t rows = 0, cols = 0;
    Vec v;
    model::GgmlType type = model::GgmlType::F32;
};

Matrix dequantize(const model::WeightRef& w) {
    Matrix m{w.rows, w.cols, Vec(static_cast<size_t>(w.rows * w.cols)), w.type};
    std::vector<float> row(static_cast<size_t>(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
        model::dequantizeRow(w.type, w.row(r), row.data(), w.cols);
        for (int64_t c = 0; c < w.cols; ++c) m.v[static_cast<size_t>(r * w.cols + c)] = row[static_cast<size_t>(c)];
    }
    return m;
}

Vec vectorOf(const model::WeightRef& w) {
    if (!w.present()) return {};
    return dequantize(w).v;  // a 1-D tensor binds as one row
}

// x as ggml's CPU backend hands it to a weight of type t: rounded through the activation
// format llama.cpp pairs with t (Q8_K, Q8_0, Q8_1, F16, BF16; F32 weights take it as is).
Vec roundedActivations(model::GgmlType t, const Vec& x) {
    using model::GgmlType;
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<float> f(x.begin(), x.end()), back(f.size());
    switch (t) {
        case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K:
        case GgmlType::IQ4_XS: {
            std::vector<model::BlockQ8_K> q(static_cast<size_t>(n / 256));
            model::quantizeRowQ8_K(f.data(), q.data(), n);
            model::dequantizeRow(GgmlType::Q8_K, q.data(), back.data(), n);
            break;
        }
        case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: case GgmlType::IQ4_NL: {
            std::vector<model::BlockQ8_0> q(static_cast<size_t>(n / 32));
            model::quantizeRowQ8_0(f.data(), q.data(), n);
            model::dequantizeRow(GgmlType::Q8_0, q.data(), back.data(), n);
            break;
        }
        case GgmlType::Q4_1: case GgmlType::Q5_1: {
            std::vector<model::BlockQ8_1> q(static_cast<size_t>(n / 32));
            model::quantizeRowQ8_1(f.data(), q.data(), n);
            model::dequantizeRow(GgmlType::Q8_1, q.data(), back.data(), n);
            break;
        }
        case GgmlType::F16:
            for (size_t i = 0; i < f.size(); ++i) back[i] = model::fp16ToFp32(model::fp32ToFp16(f[i]));
            break;
        case GgmlType::BF16:
            for (size_t i = 0; i < f.size(); ++i) back[i] = model::bf16ToFp32(model::fp32ToBf16(f[i]));
            break;
        default: return x;
    }
    return Vec(back.begin(), back.end());
}

Vec matvec(const Matrix& m, const Vec& xIn, bool roundActivations) {
    const Vec x = roundActivations ? roundedActivations(m.type, xIn) : xIn;
    Vec y(static_cast<size_t>(m.rows), 0.0);
    for (int64_t r = 0; r < m.rows; ++r) {
        const double* w = &m.v[static_cast<size_t>(r * m.cols)];
        double s = 0;
        for (int64_t c = 0; c < m.cols; ++c) s += w[c] * x[static_cast<size_t>(c)];
        y[static_cast<size_t>(r)] = s;
    }
    return y;
}

// RMSNorm of n-element groups of x (n = x.size() for a whole vector), each times w.
void rmsNorm(Vec& x, const Vec& w, size_t n, double eps) {
    for (size_t g = 0; g < x.size(); g += n) {
        double ss = 0;
        for (size_t i = 0; i < n; ++i) ss += x[g + i] * x[g + i];
        const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
        for (size_t i = 0; i < n; ++i) x[g + i] *= scale * w[i];
    }
}

void addInto(Vec& x, const Vec& b) {
    for (size_t i = 0; i < b.size(); ++i) x[i] += b[i];
}

struct Layer {
    Vec attnNorm, bq, bk, bv, qNorm, kNorm, postAttnNorm, ffnNorm, postFfnNorm;
    Matrix wq, wk, wv, wo, gate, up, down;
};

}  // namespace

std::vector<std::vector<double>> fp64Logits(const model::Model& model, const std::vector<int32_t>& prompt,
                                            Fp64Rounding rounding) {
    const bool kvHalf = rounding != Fp64Rounding::Exact, r = rounding == Fp64Rounding::LikeReference;
    const auto& c = model.config();
    const auto& w = model.weights();
    auto refuse = [&](const char* what) {
        throw std::runtime_error(model.file().path() + ": the fp64 pass does not implement " + what);
    };
    if (c.isMoe()) refuse("MoE");
    if (c.hybrid.enabled()) refuse("DeltaNet layers");
    if (w.ropeFreqs.present()) refuse("rope_freqs");
    if (c.ropeScaling.type == model::RopeScalingType::Yarn) refuse("yarn rope scaling");

    std::vector<Layer> layers(static_cast<size_t>(c.nLayer));
    for (int32_t il = 0; il < c.nLayer; ++il) {
        const auto& lw = w.layers[static_cast<size_t>(il)];
        Layer& l = layers[static_cast<size_t>(il)];
        l.attnNorm = vectorOf(lw.attnNorm), l.qNorm = vectorOf(lw.qNorm), l.kNorm = vectorOf(lw.kNorm);
        l.bq = vectorOf(lw.bq), l.bk = vectorOf(lw.bk), l.bv = vectorOf(lw.bv);
        l.postAttnNorm = vectorOf(lw.postAttnNorm), l.ffnNorm = vectorOf(lw.ffnNorm);
        l.postFfnNorm = vectorOf(lw.postFfnNorm);
        l.wq = dequantize(lw.wq), l.wk = dequantize(lw.wk), l.wv = dequantize(lw.wv), l.wo = dequantize(lw.wo);
        l.gate = dequantize(lw.ffnGate), l.up = dequantize(lw.ffnUp), l.down = dequantize(lw.ffnDown);
    }
    const Matrix embd = dequantize(w.tokenEmbd);
    const Matrix output = c.tiedEmbeddings ? embd : dequantize(w.output);
    const Vec outputNorm = vectorOf(w.outputNorm);

    const size_t hd = static_cast<size_t>(c.headDim);
    const int32_t group = c.nHead / c.nHeadKv;
    const double eps = c.normEps;
    // keys[il][pos] / values[il][pos]: kvDim doubles each.
    std::vector<std::vector<Vec>> keys(layers.size()), values(layers.size());
    std::vector<std::vector<double>> logits;

    auto rope = [&](Vec& x, int32_t heads, int32_t pos, bool sliding) {
        const double base = sliding ? c.ropeBaseSwa : c.ropeBase;
        const bool linear = !sliding && c.ropeScaling.type == model::RopeScalingType::Linear;
        const double freqScale = linear ? 1.0 / c.ropeScaling.factor : 1.0;
        const int32_t dims = c.ropeDim, half = dims / 2;
        for (int32_t h = 0; h < heads; ++h) {
            double* v = &x[static_cast<size_t>(h) * hd];
            for (int32_t i = 0; i < half; ++i) {
                const double theta = pos * freqScale * std::pow(base, -2.0 * i / dims);
                const int32_t a = c.ropeStyle == model::RopeStyle::Neox ? i : 2 * i;
                const int32_t b = c.ropeStyle == model::RopeStyle::Neox ? i + half : 2 * i + 1;
                const double x0 = v[a], x1 = v[b];
                v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
                v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
            }
        }
    };

    for (int32_t pos = 0; pos < static_cast<int32_t>(prompt.size()); ++pos) {
        const int32_t token = prompt[static_cast<size_t>(pos)];
        Vec x(embd.v.begin() + token * embd.cols, embd.v.begin() + (token + 1) * embd.cols);
        for (double& e : x) e *= c.embedScale;  // sqrt(d) for gemma3: 16 for d = 256, exact in float
        for (int32_t il = 0; il < c.nLayer; ++il) {
            Layer& l = layers[static_cast<size_t>(il)];
            const bool sliding = c.slidingLayer(il);
            Vec h = x;
            rmsNorm(h, l.attnNorm, h.size(), eps);
            Vec q = matvec(l.wq, h, r), k = matvec(l.wk, h, r), v = matvec(l.wv, h, r);
            addInto(q, l.bq), addInto(k, l.bk), addInto(v, l.bv);
            if (c.qkNorm) rmsNorm(q, l.qNorm, hd, eps), rmsNorm(k, l.kNorm, hd, eps);
            rope(q, c.nHead, pos, sliding);
            rope(k, c.nHeadKv, pos, sliding);
            if (kvHalf)
                for (Vec* kv : {&k, &v})
                    for (double& e : *kv) e = model::fp16ToFp32(model::fp32ToFp16(static_cast<float>(e)));
            keys[static_cast<size_t>(il)].push_back(k);
            values[static_cast<size_t>(il)].push_back(v);
            const int32_t first = sliding ? std::max(0, pos - c.slidingWindow + 1) : 0;
            Vec attn(q.size(), 0.0);
            for (int32_t head = 0; head < c.nHead; ++head) {
                const size_t qo = static_cast<size_t>(head) * hd, ko = static_cast<size_t>(head / group) * hd;
                std::vector<double> scores;
                double top = -INFINITY;
                for (int32_t p = first; p <= pos; ++p) {
                    const Vec& key = keys[static_cast<size_t>(il)][static_cast<size_t>(p)];
                    double s = 0;
                    for (size_t i = 0; i < hd; ++i) s += q[qo + i] * key[ko + i];
                    scores.push_back(s / std::sqrt(static_cast<double>(hd)));
                    top = std::max(top, scores.back());
                }
                double sum = 0;
                for (double& s : scores) sum += (s = std::exp(s - top));
                for (int32_t p = first; p <= pos; ++p) {
                    const Vec& val = values[static_cast<size_t>(il)][static_cast<size_t>(p)];
                    const double weight = scores[static_cast<size_t>(p - first)] / sum;
                    for (size_t i = 0; i < hd; ++i) attn[qo + i] += weight * val[ko + i];
                }
            }
            Vec o = matvec(l.wo, attn, r);
            if (c.postNorms) rmsNorm(o, l.postAttnNorm, o.size(), eps);
            addInto(x, o);

            Vec f = x;
            rmsNorm(f, l.ffnNorm, f.size(), eps);
            Vec g = matvec(l.gate, f, r), u = matvec(l.up, f, r);
            for (size_t i = 0; i < g.size(); ++i) {
                const double a = g[i];
                const double act = c.geluFfn ? 0.5 * a * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)))
                                             : a / (1.0 + std::exp(-a));
                g[i] = act * u[i];
            }
            Vec d = matvec(l.down, g, r);
            if (c.postNorms) rmsNorm(d, l.postFfnNorm, d.size(), eps);
            addInto(x, d);
        }
        rmsNorm(x, outputNorm, x.size(), eps);
        logits.push_back(matvec(output, x, r));
    }
    return logits;
}

}  // namespace zinc::test
