#pragma once
// Shared by the quant tests and the benchmark: random rows of every weight type, and an
// independent double-precision reference for a weight row times an activation row.
#include <cstdint>
#include <random>
#include <vector>

#include "model/gguf/ggml_type.h"

namespace zinc::test {

// The 11 weight types the cpu tier multiplies.
const std::vector<model::GgmlType>& computableWeightTypes();

// Random bytes for the quants; sane fp16 scales/mins (|d| in [1e-3, 1e-2], Q4_K/Q5_K d > 0);
// F32/F16/BF16 rows hold normal(0, 0.05) values. One row of k elements.
std::vector<uint8_t> randomWeightRow(model::GgmlType type, int64_t k, std::mt19937& rng);
std::vector<float> randomFloats(int64_t n, std::mt19937& rng, float stddev = 1.0f);

struct ReferenceDot {
    double value;   // sum of dequantized weight * dequantized activation, in double
    double absSum;  // sum of |weight * activation|: the scale of the rounding error of any order
};
// The dot ggml defines for this weight type against an activation row already in the
// weight's activation format. For Q4_1/Q5_1, ggml multiplies the min by the activation
// block's stored s = fp16(d * sum(q)) rather than by d * sum(q); the reference does too.
ReferenceDot referenceDot(model::GgmlType weight, int64_t k, const void* wRow, const void* act);

}  // namespace zinc::test
