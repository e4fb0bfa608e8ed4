#pragma once
// Binding one tensor by name with its expected shape (model_weights.cpp); shared by the
// per-architecture binders.
#include <initializer_list>
#include <string>

#include "model/model_weights.h"

namespace zinc::model {

class GgufFile;

// Throws ModelError naming the file and tensor when it is missing, has another shape or a type
// zinc-rt cannot compute.
WeightRef bindTensor(const GgufFile& file, const std::string& name, std::initializer_list<int64_t> shape);
// A vector applied element-wise in fp32: must be F32.
WeightRef bindNorm(const GgufFile& file, const std::string& name, int64_t n);

}  // namespace zinc::model
