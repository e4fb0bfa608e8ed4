#pragma once
// Quantized (and 16-bit float) rows -> float, with exactly ggml's formulas and float
// evaluation order (ggml/src/ggml-quants.c dequantize_row_*, MIT), so a dequantized weight
// is bit-identical to what ggml would produce.
#include <cstdint>

#include "model/gguf/ggml_type.h"

namespace zinc::model {

// Dequantizes n elements (a multiple of the type's block size) from src into dst.
// Handles F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL,
// IQ4_XS and the activation
// formats Q8_1 and Q8_K. Throws ModelError naming the type for anything else, and when n
// is not a whole number of blocks.
void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace zinc::model
