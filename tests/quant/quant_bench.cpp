// quant_bench: single-thread matVec throughput per weight type on a 4096 x 4096 matrix,
// generic and AVX2 kernels. "stream" cycles through enough copies of the matrix (>= 768 MiB)
// that weights come from DRAM, as in decode; "hot" reuses one copy (from L3 where it fits).
// matMul32 multiplies one copy by 32 activation rows, as prefill does (GB/s x tokens).
// GB/s counts weight bytes only, over this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so
// a busy shared machine time-slicing the benchmark does not deflate the figures (it still
// shares caches and memory bandwidth). Usage: quant_bench [TYPE...]
// quant_bench --tokens N [TYPE...]: only matMul with N activation rows (1 = matVec), per
// multi-token kernel (avx2, and avx512vnni where the CPU has it); hot: one copy of the
// weights, stream: the copies in turn (weights from DRAM, as in a batched decode step).
#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "model/gguf/ggml_type.h"
#include "runtime/cpu/quant_dot.h"
#include "tests/quant/quant_test_support.h"

namespace {

using zinc::model::GgmlType;

double threadSeconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

constexpr int64_t kDim = 4096;
constexpr size_t kStreamBytes = size_t{768} << 20;

struct Weights {
    size_t rowBytes = 0, matrixBytes = 0;
    std::vector<std::vector<uint8_t>> copies;
    std::vector<uint8_t> act;
};

Weights makeWeights(GgmlType type, std::mt19937& rng) {
    Weights w;
    w.rowBytes = zinc::model::rowBytes(type, kDim);
    w.matrixBytes = w.rowBytes * kDim;
    std::vector<uint8_t> first(w.matrixBytes);
    for (int64_t r = 0; r < kDim; ++r) {
        const auto row = zinc::test::randomWeightRow(type, kDim, rng);
        std::memcpy(&first[r * w.rowBytes], row.data(), row.size());
    }
    const size_t n = std::max<size_t>(2, (kStreamBytes + w.matrixBytes - 1) / w.matrixBytes);
    w.copies.assign(n, first);
    const auto x = zinc::test::randomFloats(kDim, rng);
    w.act.resize(zinc::cpu::activationRowBytes(type, kDim));
    zinc::cpu::quantizeActivationRow(type, x.data(), w.act.data(), kDim);
    return w;
}

// Best of three trials (each >= 0.25 s of CPU time after a warm-up pass) of matVec over
// `copies` matrices in turn; GB/s of weight bytes.
double measure(GgmlType type, const Weights& w, size_t copies) {
    std::vector<float> y(kDim);
    auto pass = [&](size_t c) {
        zinc::cpu::matVec(type, kDim, w.copies[c].data(), w.rowBytes, kDim, w.act.data(), y.data());
    };
    for (size_t c = 0; c < copies; ++c) pass(c);
    double best = 0;
    size_t next = 0;
    for (int trial = 0; trial < 3; ++trial) {
        size_t done = 0;
        const double start = threadSeconds();
        double seconds = 0;
        do {
            pass(next++ % copies);
            ++done;
            seconds = threadSeconds() - start;
        } while (seconds < 0.25 || done < copies);
        best = std::max(best, static_cast<double>(done) * static_cast<double>(w.matrixBytes) / seconds / 1e9);
    }
    return best;
}

// matMul over one copy with kTokens activation rows; "GB/s" = weight bytes x tokens / time.
int64_t kTokens = 32;
double measureMatMul(GgmlType type, const Weights& w, bool stream = false) {
    std::vector<uint8_t> acts(w.act.size() * kTokens);
    for (int64_t t = 0; t < kTokens; ++t) std::copy(w.act.begin(), w.act.end(), acts.begin() + t * w.act.size());
    std::vector<float> y(static_cast<size_t>(kDim * kTokens));
    size_t next = 0;
    auto pass = [&] {
        const auto& m = w.copies[stream ? next++ % w.copies.size() : 0];
        zinc::cpu::matMul(type, kDim, m.data(), w.rowBytes, kDim, acts.data(), kTokens, y.data(), kDim);
    };
    pass();
    double best = 0;
    for (int trial = 0; trial < 3; ++trial) {
        int done = 0;
        const double start = threadSeconds();
        double seconds = 0;
        do {
            pass();
            ++done;
            seconds = threadSeconds() - start;
        } while (seconds < 0.25);
        best = std::max(best, static_cast<double>(done * kTokens) * static_cast<double>(w.matrixBytes) / seconds / 1e9);
    }
    return best;
}

// The ceiling: one thread summing the same bytes with plain AVX2 loads.
__attribute__((target("avx2"))) int64_t sweep(const std::vector<uint8_t>& m) {
    __m256i acc = _mm256_setzero_si256();
    for (size_t i = 0; i + 128 <= m.size(); i += 128) {
        const auto* p = reinterpret_cast<const __m256i*>(m.data() + i);
        acc = _mm256_add_epi64(acc, _mm256_add_epi64(_mm256_add_epi64(_mm256_loadu_si256(p), _mm256_loadu_si256(p + 1)),
                                                     _mm256_add_epi64(_mm256_loadu_si256(p + 2), _mm256_loadu_si256(p + 3))));
    }
    return _mm256_extract_epi64(acc, 0) + _mm256_extract_epi64(acc, 3);
}

double readBandwidth(const Weights& w) {
    volatile int64_t sink = 0;
    double best = 0;
    for (int trial = 0; trial < 3; ++trial) {
        const double start = threadSeconds();
        for (const auto& m : w.copies) sink = sink + sweep(m);
        const double seconds = threadSeconds() - start;
        best = std::max(best, static_cast<double>(w.copies.size() * w.matrixBytes) / seconds / 1e9);
    }
    return best;
}

}  // namespace

// The --tokens mode: tokens/s (activation rows x weight rows x k / time, in G elements) of
// matMul per multi-token kernel.
int tokensMode(const std::vector<GgmlType>& types) {
    std::mt19937 rng(2024);
    zinc::cpu::forceGenericQuantKernels(false);
    std::printf("matMul %lld x %lld, %lld activation rows, 1 thread: G multiply-adds per CPU-second\n",
                static_cast<long long>(kDim), static_cast<long long>(kDim), static_cast<long long>(kTokens));
    for (GgmlType type : types) {
        const Weights w = makeWeights(type, rng);
        const double macsPerByte = static_cast<double>(kDim) / static_cast<double>(w.rowBytes);
        for (bool avx2Only : {true, false}) {
            zinc::cpu::forceAvx2MultiTokenKernels(avx2Only);
            const double hot = measureMatMul(type, w) * macsPerByte;
            const double stream = measureMatMul(type, w, true) * macsPerByte;
            std::printf("%-6s %-10s hot %8.2f  stream %8.2f\n", std::string(zinc::model::ggmlTypeName(type)).c_str(),
                        zinc::cpu::multiTokenKernelName(), hot, stream);
            std::fflush(stdout);
        }
        zinc::cpu::forceAvx2MultiTokenKernels(false);
    }
    return 0;
}

int main(int argc, char** argv) {
    std::vector<GgmlType> types;
    bool tokensOnly = false;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--tokens" && i + 1 < argc) {
            kTokens = std::max(1, std::atoi(argv[++i]));
            tokensOnly = true;
            continue;
        }
        const auto t = zinc::model::ggmlTypeFromName(argv[i]);
        if (!t) {
            std::fprintf(stderr, "unknown type %s\n", argv[i]);
            return 2;
        }
        types.push_back(*t);
    }
    if (types.empty()) types = zinc::test::computableWeightTypes();
    if (tokensOnly) return tokensMode(types);

    zinc::cpu::forceGenericQuantKernels(false);
    const bool avx2 = std::string(zinc::cpu::quantKernelName()) == "avx2";
    std::mt19937 rng(2024);
    if (avx2) {
        const Weights q8 = makeWeights(GgmlType::Q8_0, rng);
        std::printf("plain AVX2 read of %.0f MiB, 1 thread: %.2f GB/s (the memory ceiling)\n",
                    static_cast<double>(q8.copies.size() * q8.matrixBytes) / (1 << 20), readBandwidth(q8));
    }
    std::printf("matVec %lld x %lld, 1 thread, weight GB/s per CPU-second (stream: >= 768 MiB of copies; hot: one copy)\n",
                static_cast<long long>(kDim), static_cast<long long>(kDim));
    std::printf("%-6s %10s %14s %12s %10s %14s\n", "type", "MiB", "generic/stream", "avx2/stream", "avx2/hot",
                "avx2/matMul32");
    {
        const auto x = zinc::test::randomFloats(kDim, rng);
        std::vector<uint8_t> out(zinc::cpu::activationRowBytes(GgmlType::F32, kDim));
        std::printf("quantizeActivationRow, ns per element:");
        for (GgmlType weight : {GgmlType::Q4_K, GgmlType::Q8_0, GgmlType::Q4_1, GgmlType::F16}) {
            const int reps = 2000;
            const double start = threadSeconds();
            for (int i = 0; i < reps; ++i) zinc::cpu::quantizeActivationRow(weight, x.data(), out.data(), kDim);
            const double ns = (threadSeconds() - start) * 1e9 / reps / kDim;
            std::printf(" %s %.2f", std::string(zinc::model::ggmlTypeName(zinc::cpu::activationType(weight))).c_str(), ns);
        }
        std::printf("\n");
    }
    for (GgmlType type : types) {
        const Weights w = makeWeights(type, rng);
        zinc::cpu::forceGenericQuantKernels(true);
        const double generic = measure(type, w, w.copies.size());
        zinc::cpu::forceGenericQuantKernels(false);
        const double fastStream = avx2 ? measure(type, w, w.copies.size()) : 0.0;
        const double fastHot = avx2 ? measure(type, w, 1) : 0.0;
        const double fastMatMul = avx2 ? measureMatMul(type, w) : 0.0;
        std::printf("%-6s %10.1f %14.2f %12.2f %10.2f %14.2f\n", std::string(zinc::model::ggmlTypeName(type)).c_str(),
                    static_cast<double>(w.matrixBytes) / (1 << 20), generic, fastStream, fastHot, fastMatMul);
        std::fflush(stdout);
    }
    return 0;
}
