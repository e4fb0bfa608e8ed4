#pragma once
// Activation rows -> the 8-bit block formats (and 16-bit floats) that ggml's CPU backend
// multiplies quantized weights with. Bit-exact with what llama.cpp's x86 CPU backend does,
// because the cpu tier must reproduce its numbers.
//
// Which ggml function is "the" one (ggml/src/ggml-cpu/arch/x86/quants.c, MIT): the CPU
// backend converts activations with type_traits_cpu[vec_dot_type].from_float, which is
// quantize_row_q8_0 / quantize_row_q8_1 / quantize_row_q8_K of ggml-cpu, not the *_ref
// functions of ggml-quants.c. On x86, quantize_row_q8_0/q8_1 take an AVX branch whenever the
// build has AVX (any x86-64 build with -march=native or a GGML_CPU_ALL_VARIANTS AVX variant),
// and that branch differs from quantize_row_q8_0_ref in two ways:
//   - inverse scale  id = 127 / amax          (ref: id = 1 / (amax / 127), may differ 1 ulp)
//   - rounding       round half to even       (ref: roundf, half away from zero)
// quantize_row_q8_K on x86 is plain quantize_row_q8_K_ref: iscale = -127 / max (max = the
// signed element of largest magnitude; ggml used -128 before 2024 and changed it to -127 for
// IQ2_XXS), q = nearest_int(iscale * x) (half to even), clamped to 127, d = 1 / iscale.
// The *Reference functions reproduce the ggml-quants.c _ref versions (used by ggml builds
// without AVX) so the difference can be tested.
//
// Checked against ../shared/reference (llama.cpp CPU goldens) on qwen3-tiny / qwen3moe-tiny:
// with these quantizers the listed logits differ from the goldens by mean 0.012, max 0.053;
// with the _ref rounding for Q8_0 the max grows to 0.112, with -128/max for Q8_K the mean
// doubles. The remaining difference is float summation order: requantizing activations to
// 8 bits turns 1-ulp differences into flipped quants, and random-weight models amplify them
// (this project's own generic and AVX2 kernels, identical integer math, differ as much).
#include <cstdint>

#include "model/quant/blocks.h"

namespace zinc::model {

// n must be a multiple of 32 (Q8_0, Q8_1) or 256 (Q8_K); throws ModelError otherwise.
void quantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n);
void quantizeRowQ8_1(const float* x, BlockQ8_1* y, int64_t n);
void quantizeRowQ8_K(const float* x, BlockQ8_K* y, int64_t n);

void quantizeRowQ8_0Reference(const float* x, BlockQ8_0* y, int64_t n);
void quantizeRowQ8_1Reference(const float* x, BlockQ8_1* y, int64_t n);

// Round-to-nearest-even conversions (F16C _cvtss_sh / ggml_compute_fp32_to_bf16).
void convertRowF16(const float* x, uint16_t* y, int64_t n);
void convertRowBF16(const float* x, uint16_t* y, int64_t n);

}  // namespace zinc::model
