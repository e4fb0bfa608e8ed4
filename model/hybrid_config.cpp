#include "model/hybrid_config.h"

#include <fmt/format.h>

#include "model/gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_error.h"

namespace zinc::model {
namespace {

int32_t required(const GgufFile& file, const std::string& key, uint64_t limit) {
    const uint64_t v = file.getU64(key);
    if (v == 0 || v > limit)
        throw ModelError(fmt::format("{}: key {} = {} is out of range (1..{})", file.path(), key, v, limit));
    return static_cast<int32_t>(v);
}

}  // namespace

void readHybridConfig(const GgufFile& file, ModelConfig& c) {
    const std::string a = c.archName + ".";
    HybridConfig& h = c.hybrid;
    // llama.cpp's default when the key is absent is 4 (Qwen3-Next, Qwen3.5, Qwen3.6).
    h.fullAttentionInterval = static_cast<int32_t>(file.findU64(a + "full_attention_interval").value_or(4));
    if (h.fullAttentionInterval <= 0 || h.fullAttentionInterval > 4096)
        throw ModelError(fmt::format("{}: key {}full_attention_interval = {} is out of range", file.path(), a,
                                     h.fullAttentionInterval));
    if (file.has(a + "attention.recurrent_layers"))
        throw ModelError(fmt::format("{}: key {}attention.recurrent_layers (an explicit layer pattern) is not "
                                     "supported; zinc-rt follows full_attention_interval", file.path(), a));
    h.convKernel = required(file, a + "ssm.conv_kernel", 64);
    h.headDim = required(file, a + "ssm.state_size", 4096);
    h.keyHeads = required(file, a + "ssm.group_count", 4096);
    h.valueHeads = required(file, a + "ssm.time_step_rank", 4096);
    const int32_t inner = required(file, a + "ssm.inner_size", 1 << 20);
    if (inner != h.valueDim() || h.valueHeads % h.keyHeads != 0)
        throw ModelError(fmt::format("{}: ssm.inner_size {} must be time_step_rank {} x state_size {}, and "
                                     "time_step_rank a multiple of group_count {}",
                                     file.path(), inner, h.valueHeads, h.headDim, h.keyHeads));
    h.sharedFf = static_cast<int32_t>(file.findU64(a + "expert_shared_feed_forward_length").value_or(0));
    // block_count counts the MTP (nextn) blocks appended after the stack; they are not run.
    h.mtpLayers = static_cast<int32_t>(file.findU64(a + "nextn_predict_layers").value_or(0));
    if (h.mtpLayers >= c.nLayer)
        throw ModelError(fmt::format("{}: nextn_predict_layers {} must be below block_count {}", file.path(),
                                     h.mtpLayers, c.nLayer));
    c.nLayer -= h.mtpLayers;
    if (auto s = file.findI32Array(a + "rope.dimension_sections"))
        for (size_t i = 0; i < s->size() && i < 4; ++i) h.ropeSections[i] = (*s)[i];
    // IMRoPE pairs dims (i, i + n_rot/2) like NEOX; with the three text positions equal, every
    // section turns by the same position, so it is NEOX RoPE on the first n_rot dims.
    c.ropeStyle = RopeStyle::Neox;
    c.qkNorm = true;
}

}  // namespace zinc::model
