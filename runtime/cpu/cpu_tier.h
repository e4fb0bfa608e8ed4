#pragma once
// T-CPU: the correctness oracle. Executes the decode graph op by op on all cores, with the
// same 8-bit activation blocks llama.cpp's CPU backend uses for quantized weights.
#include <memory>

#include "runtime/tier.h"

namespace zinc::cpu {

std::unique_ptr<runtime::Tier> makeCpuTier(const graph::Graph& graph, const runtime::TierOptions& options);

}  // namespace zinc::cpu
