#include "runtime/cpu/quant_dot.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "model/model_error.h"
#include "model/quant/blocks.h"
#include "model/quant/quantize_activations.h"
#include "runtime/cpu/quant_kernels.h"

namespace zinc::cpu {
namespace {

using model::GgmlType;
using model::ModelError;

bool cpuHasAvx2FmaF16c() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
    return false;
#endif
}

bool cpuHasAvx512Vnni() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
}

// Detected once; the flags only let tests and benchmarks fall back to the portable kernels
// or to the AVX2 multi-token kernels on a VNNI CPU.
bool avx2Detected() {
    static const bool detected = cpuHasAvx2FmaF16c();
    return detected;
}
bool vnniDetected() {
    static const bool detected = cpuHasAvx2FmaF16c() && cpuHasAvx512Vnni();
    return detected;
}
std::atomic<bool> forceGeneric{false};
std::atomic<bool> forceAvx2{false};

bool useAvx2() { return avx2Detected() && !forceGeneric.load(std::memory_order_relaxed); }
bool useVnni() { return useAvx2() && vnniDetected() && !forceAvx2.load(std::memory_order_relaxed); }

[[noreturn]] void unsupported(GgmlType weight, const char* what) {
    throw ModelError(std::string(what) + ": the cpu tier cannot multiply " +
                     std::string(model::ggmlTypeName(weight)) + " weights");
}

kernels::MatVecFn kernelFor(GgmlType weight, int64_t k, const char* what) {
    const auto& traits = model::traitsOf(weight);
    if (k <= 0 || k % traits.blockElems != 0)
        throw ModelError(std::string(what) + ": k = " + std::to_string(k) + " is not a whole number of " +
                         std::string(traits.name) + " blocks");
    kernels::MatVecFn fn = useAvx2() ? kernels::avx2Kernel(weight) : nullptr;
    if (!fn) fn = kernels::genericKernel(weight);
    if (!fn) unsupported(weight, what);
    return fn;
}

// matMul tiling: a tile of weight rows small enough to stay in L2 next to a chunk of
// activation rows is multiplied with every token of the chunk before moving on, so weights
// come from memory once per token chunk instead of once per token.
constexpr size_t kWeightTileBytes = 96 * 1024;
constexpr int64_t kTokenChunk = 32;

}  // namespace

GgmlType activationType(GgmlType weight) {
    switch (weight) {
        case GgmlType::F32: return GgmlType::F32;
        case GgmlType::F16: return GgmlType::F16;
        case GgmlType::BF16: return GgmlType::BF16;
        case GgmlType::Q4_0:
        case GgmlType::Q5_0:
        case GgmlType::Q8_0: return GgmlType::Q8_0;
        case GgmlType::Q4_1:
        case GgmlType::Q5_1: return GgmlType::Q8_1;
        case GgmlType::IQ4_NL: return GgmlType::Q8_0;
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
        case GgmlType::IQ4_XS: return GgmlType::Q8_K;
        default: unsupported(weight, "activationType");
    }
}

size_t activationRowBytes(GgmlType weight, int64_t k) {
    return static_cast<size_t>(model::rowBytes(activationType(weight), static_cast<uint64_t>(k)));
}

void quantizeActivationRow(GgmlType weight, const float* x, void* out, int64_t k) {
    const GgmlType type = activationType(weight);
    if (useAvx2() && type != GgmlType::F32 && type != GgmlType::BF16) {
        const auto& traits = model::traitsOf(type);
        if (k < 0 || k % traits.blockElems != 0)
            throw ModelError("quantizeActivationRow: " + std::to_string(k) + " elements is not a whole number of " +
                             std::string(traits.name) + " blocks");
        switch (type) {
            case GgmlType::F16: kernels::avx2::convertF16(x, out, k); return;
            case GgmlType::Q8_0: kernels::avx2::quantizeQ8_0(x, out, k); return;
            case GgmlType::Q8_1: kernels::avx2::quantizeQ8_1(x, out, k); return;
            case GgmlType::Q8_K: kernels::avx2::quantizeQ8_K(x, out, k); return;
            default: break;
        }
    }
    switch (type) {
        case GgmlType::F32: std::copy(x, x + k, static_cast<float*>(out)); return;
        case GgmlType::F16: model::convertRowF16(x, static_cast<uint16_t*>(out), k); return;
        case GgmlType::BF16: model::convertRowBF16(x, static_cast<uint16_t*>(out), k); return;
        case GgmlType::Q8_0: model::quantizeRowQ8_0(x, static_cast<model::BlockQ8_0*>(out), k); return;
        case GgmlType::Q8_1: model::quantizeRowQ8_1(x, static_cast<model::BlockQ8_1*>(out), k); return;
        case GgmlType::Q8_K: model::quantizeRowQ8_K(x, static_cast<model::BlockQ8_K*>(out), k); return;
        default: unsupported(weight, "quantizeActivationRow");
    }
}

void convertRowToHalf(const float* x, uint16_t* out, int64_t n) {
    if (useAvx2())
        kernels::avx2::convertF16(x, out, n);
    else
        model::convertRowF16(x, out, n);
}

void matVec(GgmlType weight, int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    kernelFor(weight, k, "matVec")(k, w, wStride, rows, act, y);
}

void matMul(GgmlType weight, int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts,
            int64_t nTokens, float* y, size_t yStride) {
    const kernels::MatVecFn fn = kernelFor(weight, k, "matMul");
    if (nTokens >= 2 && useAvx2()) {
        kernels::MatMulFn multi = useVnni() ? kernels::vnniMultiTokenKernel(weight) : nullptr;
        if (!multi) multi = kernels::avx2MultiTokenKernel(weight);
        if (multi) {
            multi(k, w, wStride, rows, acts, nTokens, y, yStride);
            return;
        }
    }
    const size_t actBytes = activationRowBytes(weight, k);
    const int64_t tileRows = std::max<int64_t>(4, static_cast<int64_t>(kWeightTileBytes / std::max<size_t>(wStride, 1)) & ~int64_t{3});
    const auto* wBase = static_cast<const uint8_t*>(w);
    const auto* aBase = static_cast<const uint8_t*>(acts);
    for (int64_t t0 = 0; t0 < nTokens; t0 += kTokenChunk) {
        const int64_t t1 = std::min(nTokens, t0 + kTokenChunk);
        for (int64_t r0 = 0; r0 < rows; r0 += tileRows) {
            const int64_t nr = std::min(tileRows, rows - r0);
            for (int64_t t = t0; t < t1; ++t)
                fn(k, wBase + static_cast<size_t>(r0) * wStride, wStride, nr, aBase + static_cast<size_t>(t) * actBytes,
                   y + static_cast<size_t>(t) * yStride + r0);
        }
    }
}

const char* quantKernelName() { return useAvx2() ? "avx2" : "generic"; }

void forceGenericQuantKernels(bool on) { forceGeneric.store(on, std::memory_order_relaxed); }

const char* multiTokenKernelName() { return useVnni() ? "avx512vnni" : quantKernelName(); }

void forceAvx2MultiTokenKernels(bool on) { forceAvx2.store(on, std::memory_order_relaxed); }

namespace kernels {

#define ZINC_KERNEL_CASE(NS, T) \
    case GgmlType::T: return &NS::matVec##T;

MatVecFn genericKernel(GgmlType weight) {
    switch (weight) {
#define X(T) ZINC_KERNEL_CASE(generic, T)
        ZINC_QUANT_KERNEL_LIST(X)
        ZINC_QUANT_GENERIC_ONLY_LIST(X)
#undef X
        default: return nullptr;
    }
}

MatVecFn avx2Kernel(GgmlType weight) {
    switch (weight) {
#define X(T) ZINC_KERNEL_CASE(avx2, T)
        ZINC_QUANT_KERNEL_LIST(X)
#undef X
        default: return nullptr;
    }
}

#undef ZINC_KERNEL_CASE

MatMulFn avx2MultiTokenKernel(GgmlType weight) {
    switch (weight) {
        case GgmlType::Q4_K: return &avx2::matMulQ4_K;
        case GgmlType::Q5_K: return &avx2::matMulQ5_K;
        case GgmlType::Q6_K: return &avx2::matMulQ6_K;
        case GgmlType::Q8_0: return &avx2::matMulQ8_0;
        case GgmlType::Q4_0: return &avx2::matMulQ4_0;
        case GgmlType::Q5_0: return &avx2::matMulQ5_0;
        default: return nullptr;
    }
}

MatMulFn vnniMultiTokenKernel(GgmlType weight) {
    switch (weight) {
        case GgmlType::Q4_K: return &vnni::matMulQ4_K;
        case GgmlType::Q5_K: return &vnni::matMulQ5_K;
        case GgmlType::Q6_K: return &vnni::matMulQ6_K;
        default: return nullptr;
    }
}

}  // namespace kernels
}  // namespace zinc::cpu
