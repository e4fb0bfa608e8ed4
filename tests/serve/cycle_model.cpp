#include "tests/serve/cycle_model.h"

#include <set>
#include <stdexcept>

#include "model/gguf/gguf_writer.h"
#include "model/make_model/tokenizer_meta.h"

namespace zinc::test {
namespace {

constexpr uint64_t kEmbd = 64, kHeads = 4, kFf = 64;
// RMS norm turns a one-hot row into sqrt(64) = 8 on its axis; times this weight, the next token
// leads every other one by 32 logits, so sampling at any temperature says the same thing.
constexpr float kNextTokenWeight = 4.0f;

void writeF32(model::GgufWriter& w, size_t index, const std::vector<float>& values) {
    w.writeTensorData(index, {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)});
}

}  // namespace

void writeCycleModel(const std::string& path, const model::TokenizerData& tokenizer, const std::vector<int32_t>& cycle,
                     uint32_t contextLength) {
    const uint64_t vocab = tokenizer.tokens.size();
    if (cycle.empty() || cycle.size() >= kEmbd || std::set<int32_t>(cycle.begin(), cycle.end()).size() != cycle.size())
        throw std::invalid_argument("writeCycleModel: the cycle needs 1 to 63 distinct tokens");
    model::GgufWriter w(path);
    w.addString("general.architecture", "llama");
    w.addString("general.name", "cycle");
    w.addU32("llama.context_length", contextLength);
    w.addU32("llama.embedding_length", kEmbd);
    w.addU32("llama.block_count", 1);
    w.addU32("llama.feed_forward_length", kFf);
    w.addU32("llama.attention.head_count", kHeads);
    w.addF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    model::writeTokenizerMetadata(w, tokenizer);
    struct Tensor {
        std::string name;
        uint64_t ne0, ne1;
        std::vector<float> values;
    };
    // Axis 0: every token outside the cycle; axis i + 1: cycle[i].
    std::vector<float> embd(vocab * kEmbd, 0.0f), output(vocab * kEmbd, 0.0f);
    for (uint64_t t = 0; t < vocab; ++t) embd[t * kEmbd] = 1.0f;
    for (size_t i = 0; i < cycle.size(); ++i) {
        const uint64_t t = static_cast<uint64_t>(cycle[i]);
        embd[t * kEmbd] = 0.0f;
        embd[t * kEmbd + i + 1] = 1.0f;
        const uint64_t next = static_cast<uint64_t>(cycle[(i + 1) % cycle.size()]);
        output[next * kEmbd + i + 1] = kNextTokenWeight;
    }
    output[static_cast<uint64_t>(cycle[0]) * kEmbd] = kNextTokenWeight;
    const std::vector<float> ones(kEmbd, 1.0f), zeros(kEmbd * kEmbd, 0.0f), zeroFf(kEmbd * kFf, 0.0f);
    const std::vector<Tensor> tensors = {
        {"token_embd.weight", kEmbd, vocab, embd},   {"output_norm.weight", kEmbd, 1, ones},
        {"output.weight", kEmbd, vocab, output},     {"blk.0.attn_norm.weight", kEmbd, 1, ones},
        {"blk.0.attn_q.weight", kEmbd, kEmbd, zeros}, {"blk.0.attn_k.weight", kEmbd, kEmbd, zeros},
        {"blk.0.attn_v.weight", kEmbd, kEmbd, zeros}, {"blk.0.attn_output.weight", kEmbd, kEmbd, zeros},
        {"blk.0.ffn_norm.weight", kEmbd, 1, ones},   {"blk.0.ffn_gate.weight", kEmbd, kFf, zeroFf},
        {"blk.0.ffn_up.weight", kEmbd, kFf, zeroFf},  {"blk.0.ffn_down.weight", kFf, kEmbd, zeroFf},
    };
    for (const Tensor& t : tensors) {
        if (t.ne1 == 1)
            w.addTensor(t.name, model::GgmlType::F32, {t.ne0});
        else
            w.addTensor(t.name, model::GgmlType::F32, {t.ne0, t.ne1});
    }
    w.writeHeader();
    for (size_t i = 0; i < tensors.size(); ++i) writeF32(w, i, tensors[i].values);
    w.finish();
}

}  // namespace zinc::test
