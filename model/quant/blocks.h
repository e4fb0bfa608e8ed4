#pragma once
// Byte layouts of ggml's quantized blocks, as stored in GGUF tensor data. Layouts follow
// ggml/src/ggml-common.h (MIT): each struct is one block, packed, little endian, halves as
// raw IEEE binary16 bits. A weight value is d * q (or d * q + m / - dmin * min for the
// "_1" and K types); see dequantize.cpp for the exact formulas.
#include <cstdint>

namespace zinc::model {

inline constexpr int kQK = 32;    // elements per block of the legacy types
inline constexpr int kQKK = 256;  // elements per super-block of the K types
inline constexpr int kScaleBytesK = 12;

#pragma pack(push, 1)
struct BlockQ4_0 { uint16_t d; uint8_t qs[kQK / 2]; };
struct BlockQ4_1 { uint16_t d; uint16_t m; uint8_t qs[kQK / 2]; };
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[kQK / 2]; };
struct BlockQ5_1 { uint16_t d; uint16_t m; uint8_t qh[4]; uint8_t qs[kQK / 2]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[kQK]; };
// Activations for Q4_1/Q5_1 dot products: s = d * sum(qs).
struct BlockQ8_1 { uint16_t d; uint16_t s; int8_t qs[kQK]; };
// 8 sub-blocks of 32; 6-bit scales and mins packed in `scales`.
struct BlockQ4_K { uint16_t d; uint16_t dmin; uint8_t scales[kScaleBytesK]; uint8_t qs[kQKK / 2]; };
struct BlockQ5_K { uint16_t d; uint16_t dmin; uint8_t scales[kScaleBytesK]; uint8_t qh[kQKK / 8]; uint8_t qs[kQKK / 2]; };
// 16 sub-blocks of 16; signed 8-bit scales; values are 6-bit minus 32.
struct BlockQ6_K { uint8_t ql[kQKK / 2]; uint8_t qh[kQKK / 4]; int8_t scales[kQKK / 16]; uint16_t d; };
// Activations for K-type dot products: float scale, bsums = sums of 16 consecutive qs.
struct BlockQ8_K { float d; int8_t qs[kQKK]; int16_t bsums[kQKK / 16]; };
// 16 sub-blocks of 16; 2-bit quants; scales byte j = 4-bit scale (low) | 4-bit min (high).
struct BlockQ2_K { uint8_t scales[kQKK / 16]; uint8_t qs[kQKK / 4]; uint16_t d; uint16_t dmin; };
// 16 sub-blocks of 16; 2 low bits in qs, a third bit in hmask (set: +0, clear: -4); 6-bit
// scales packed in 12 bytes, stored + 32.
struct BlockQ3_K { uint8_t hmask[kQKK / 8]; uint8_t qs[kQKK / 4]; uint8_t scales[kScaleBytesK]; uint16_t d; };
// 4-bit indices into kIq4nlValues, 32 per block.
struct BlockIQ4_NL { uint16_t d; uint8_t qs[kQK / 2]; };
// 8 sub-blocks of 32 with 6-bit scales (stored + 32): low 4 bits in scales_l, high 2 in scales_h.
struct BlockIQ4_XS { uint16_t d; uint16_t scalesH; uint8_t scalesL[kQKK / 64]; uint8_t qs[kQKK / 2]; };
#pragma pack(pop)

// The non-linear levels of IQ4_NL and IQ4_XS (ggml-common.h kvalues_iq4nl).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210 && sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockIQ4_NL) == 18 && sizeof(BlockIQ4_XS) == 136);

}  // namespace zinc::model
