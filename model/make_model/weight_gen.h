#pragma once
// Random weights written directly as ggml blocks (nothing is quantized from floats): random
// quants, and per-block scales (d, dmin, sub-block scales and mins) chosen so the weights
// are zero-mean with the requested standard deviation and every field of the layout matters.
// Each generation unit (one block; 256 elements of a plain type) draws from its own stream
// seeded by (seed, tensor index, unit index): the output does not depend on threading.
#include <cstdint>

#include "model/gguf/ggml_type.h"

namespace zinc::model {

struct WeightInit {
    float mean = 0.0f;  // non-zero only for plain (F32/F16/BF16) tensors, e.g. norm gains
    float std = 1.0f;
};

// Elements per generation unit: the block size, or 256 for F32/F16/BF16.
uint64_t genUnitElems(GgmlType type);
// Units in a tensor of `elements` elements (the last unit of a plain type may be partial).
uint64_t genUnitCount(GgmlType type, uint64_t elements);
// Bytes of a full unit.
uint64_t genUnitBytes(GgmlType type);
// Whether make-model can generate this type (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q4_K, Q5_K, Q6_K).
bool canGenerate(GgmlType type);

// Writes units [firstUnit, firstUnit + nUnits) of tensor `tensorIndex` (of `elements`
// elements) to out; returns the bytes written. Throws ModelError for a type canGenerate()
// rejects, or a non-zero mean for a quantized type.
uint64_t generateUnits(GgmlType type, const WeightInit& init, uint64_t seed, uint64_t tensorIndex,
                       uint64_t elements, uint64_t firstUnit, uint64_t nUnits, uint8_t* out);

}  // namespace zinc::model
