#pragma once
// Shared by the kernel tests: one PoCL runner and the parsed gfx1100 code object for the
// whole binary, SVM buffers, kernarg segments built from kernels/kernel_args.h structs,
// and random inputs (quantized blocks with sane scales).
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/code_object.h"
#include "kernels/pocl_runner.h"
#include "model/gguf/ggml_type.h"

namespace zinc::kernels::test {

PoclRunner& runner();
// The embedded code object whose metadata decodes kernargs for PoCL (gfx1100; gfx1201 has
// the same argument layouts, checked in code_object_test).
const CodeObject& codeObject();

// Launches kernel `name` with the kernarg segment `args` (a kernel_args.h struct) over
// `groups` workgroups of the kernel's required workgroup size, as the simulated GPU will.
template <typename Args>
void launch(const char* name, const Args& args, Dim3 groups) {
    const KernelInfo& k = codeObject().kernel(name);
    std::vector<uint8_t> kernarg(sizeof(Args));
    std::memcpy(kernarg.data(), &args, sizeof(Args));
    runner().launch(k, kernarg, groups, Dim3{k.reqdWorkgroupSize[0], k.reqdWorkgroupSize[1], k.reqdWorkgroupSize[2]});
}

inline uint32_t ceilDiv(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// An SVM allocation freed at scope exit.
class SvmBuffer {
public:
    explicit SvmBuffer(size_t bytes) : bytes_(bytes), p_(runner().svm().alloc(bytes)) {}
    template <typename T>
    explicit SvmBuffer(const std::vector<T>& data) : SvmBuffer(data.size() * sizeof(T)) {
        std::memcpy(p_, data.data(), bytes_);
    }
    ~SvmBuffer() { runner().svm().free(p_); }
    SvmBuffer(const SvmBuffer&) = delete;
    SvmBuffer& operator=(const SvmBuffer&) = delete;

    uint64_t addr() const { return reinterpret_cast<uint64_t>(p_); }
    template <typename T>
    T* as() const { return static_cast<T*>(p_); }
    template <typename T>
    std::vector<T> read(size_t n) const {
        std::vector<T> v(n);
        std::memcpy(v.data(), p_, n * sizeof(T));
        return v;
    }
    size_t bytes() const { return bytes_; }

private:
    size_t bytes_;
    void* p_;
};

std::vector<float> randomFloats(std::mt19937& rng, size_t n, float scale = 1.0f);
// `rows` rows of `cols` elements of `type` (F32, F16 or a block type): random quants and
// scales drawn so every weight is finite.
std::vector<uint8_t> randomWeights(std::mt19937& rng, model::GgmlType type, int64_t rows, int64_t cols);

// Largest |a - b| over two float arrays, and the largest |b|.
struct Diff {
    double maxAbs = 0.0, maxRef = 0.0;
    size_t mismatches = 0;  // positions whose bits differ
};
Diff compare(std::span<const float> got, std::span<const float> want);

}  // namespace zinc::kernels::test
