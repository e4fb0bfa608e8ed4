#pragma once
// Runs single cpu-tier ops (runtime/cpu/ops_*.cpp) outside a model: a hand-built graph of
// the buffers one op needs, its memory plan and arena, a one-thread pool and a KV cache, in
// ggml precision with the generic (portable) kernels — the reference the GPU kernels match.
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "runtime/cpu/kv_cache.h"
#include "runtime/cpu/op_context.h"
#include "runtime/cpu/quant_dot.h"
#include "runtime/cpu/thread_pool.h"

namespace zinc::kernels::test {

class CpuOps {
public:
    explicit CpuOps(const model::ModelConfig& config) : config_(config) {
        graph_.config = &config_;
        cpu::forceGenericQuantKernels(true);
    }
    ~CpuOps() { cpu::forceGenericQuantKernels(false); }

    graph::BufferId buffer(const std::string& name, int64_t width, graph::ElemType elem = graph::ElemType::F32, bool persistent = false) {
        graph_.buffers.push_back({name, elem, width, persistent});
        return static_cast<graph::BufferId>(graph_.buffers.size() - 1);
    }
    // Call after the buffers are declared: lays out the arena for `tokens` tokens.
    void allocate(int32_t tokens, int32_t contextLength = 0) {
        tokens_.assign(static_cast<size_t>(tokens), 0);
        plan_ = graph::planMemory(graph_, tokens);
        arena_.resize(plan_.arenaBytes);
        model::ModelConfig oneLayer = config_;
        oneLayer.nLayer = 1;
        kv_ = std::make_unique<cpu::KvCache>(graph::planKv(oneLayer, std::max(1, contextLength), tokens),
                                             std::max(1, config_.kvDim()), true);
    }
    float* f32(graph::BufferId id, int32_t t) { return context(0).f32(id, t); }
    int32_t* i32(graph::BufferId id, int32_t t) { return context(0).i32(id, t); }
    void fill(graph::BufferId id, std::span<const float> values) {
        std::copy(values.begin(), values.end(), f32(id, 0));  // token rows are contiguous
    }
    std::vector<float> read(graph::BufferId id, int32_t tokens) {
        const auto w = static_cast<size_t>(graph_.buffer(id).width);
        return std::vector<float>(f32(id, 0), f32(id, 0) + w * static_cast<size_t>(tokens));
    }
    cpu::KvCache& kv() { return *kv_; }

    // ggml's rope tables as the cpu tier's fillRopeTables writes them (model::ropeCosSin),
    // with `freqFactors` (rope_freqs) when given.
    void fillRope(int32_t position, int32_t tokens, const float* freqFactors = nullptr) {
        const auto half = static_cast<size_t>(config_.ropeDim / 2);
        ropeCos_.assign(half * static_cast<size_t>(tokens), 0.0f);
        ropeSin_.assign(half * static_cast<size_t>(tokens), 0.0f);
        for (int32_t t = 0; t < tokens; ++t)
            model::ropeCosSin(config_.rope(), freqFactors, position + t, ropeCos_.data() + t * half, ropeSin_.data() + t * half);
    }
    model::RopeParams rope() const { return config_.rope(); }

    cpu::OpContext context(int32_t position) {
        return cpu::OpContext{graph_,         plan_,          arena_.data(),           pool_,  *kv_,      tokens_, position, 0,
                              static_cast<int32_t>(tokens_.size()), ropeCos_.data(), ropeSin_.data(), runtime::Precision::Ggml,
                              scratch_};
    }

private:
    model::ModelConfig config_;
    graph::Graph graph_;
    graph::MemoryPlan plan_;
    cpu::AlignedBytes arena_, scratch_;
    cpu::ThreadPool pool_{1};
    std::unique_ptr<cpu::KvCache> kv_;
    std::vector<int32_t> tokens_;
    std::vector<float> ropeCos_, ropeSin_;
};

// A weight over host bytes, as model::ModelWeights binds them.
inline model::WeightRef weightRef(model::GgmlType type, int64_t cols, int64_t rows, int64_t stack, const std::vector<uint8_t>& data) {
    model::WeightRef w;
    w.name = "test";
    w.type = type;
    w.cols = cols;
    w.rows = rows;
    w.stack = stack;
    w.rowBytes = static_cast<size_t>(model::rowBytes(type, static_cast<uint64_t>(cols)));
    w.data = data.data();
    w.nbytes = data.size();
    return w;
}

}  // namespace zinc::kernels::test
