#include "model/make_model/make_model.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "model/gguf/gguf_writer.h"
#include "model/make_model/model_preset.h"
#include "model/make_model/ordered_pipeline.h"
#include "model/make_model/quant_mix.h"
#include "model/make_model/tensor_plan.h"
#include "model/make_model/tokenizer_meta.h"
#include "model/make_model/weight_gen.h"
#include "model/model_error.h"

namespace zinc::model {
namespace {

constexpr uint64_t kChunkBytes = 4u << 20;
constexpr uint32_t kQuantizationVersion = 2;  // GGML_QNT_VERSION, as convert and llama-quantize write it

template <class T>
std::string joinNames(const std::vector<T>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i.name;
    return out;
}

ModelPreset resolvePreset(const MakeModelOptions& o) {
    auto preset = findModelPreset(o.preset);
    if (!preset) throw ModelError("make-model: unknown preset '" + o.preset + "'; known: " + joinNames(modelPresets()));
    if (o.layers) {
        if (*o.layers == 0 || *o.layers > 4096) throw ModelError("make-model: layers must be 1..4096");
        preset->nLayers = *o.layers;
    }
    if (o.contextLength) {
        if (*o.contextLength == 0) throw ModelError("make-model: context length must be positive");
        preset->contextLength = *o.contextLength;
    }
    return *preset;
}

// The tokenizer from tokenizer.json, or the built-in byte-level vocabulary; padded to the
// preset's vocab size, which grows when the tokenizer has more tokens.
TokenizerData resolveTokenizer(const MakeModelOptions& o, ModelPreset& preset) {
    TokenizerData t = o.tokenizerJson.empty()
                          ? builtinByteLevelTokenizer(preset.tokenizerPre)
                          : TokenizerData::fromHfTokenizerJson(o.tokenizerJson, o.tokenizerConfigJson);
    if (t.tokens.size() > preset.vocab) {
        // Embedding rows are padded past the last token as in real models (Qwen3 has 151669
        // tokens in 151936 rows); a multiple of 128 keeps the shape tidy.
        preset.vocab = static_cast<uint32_t>((t.tokens.size() + 127) / 128 * 128);
    }
    padVocabulary(t, preset.vocab);
    return t;
}

void writeModelMetadata(GgufWriter& w, const ModelPreset& p, const QuantMix& mix) {
    const std::string a = p.arch + ".";
    w.addString("general.architecture", p.arch);
    w.addString("general.name", p.name);
    w.addU32(a + "context_length", p.contextLength);
    w.addU32(a + "embedding_length", p.dModel);
    w.addU32(a + "block_count", p.nLayers);
    w.addU32(a + "feed_forward_length", p.ffn);
    w.addU32(a + "attention.head_count", p.nHeads);
    w.addU32(a + "attention.head_count_kv", p.nKvHeads);
    if (p.arch == "llama") {
        w.addU32(a + "rope.dimension_count", p.headDim);
    } else {
        w.addU32(a + "attention.key_length", p.headDim);
        w.addU32(a + "attention.value_length", p.headDim);
    }
    w.addF32(a + "rope.freq_base", p.ropeBase);
    if (p.ropeLinearFactor > 0.0f) {
        w.addString(a + "rope.scaling.type", "linear");
        w.addF32(a + "rope.scaling.factor", p.ropeLinearFactor);
    }
    if (p.slidingWindow > 0) w.addU32(a + "attention.sliding_window", p.slidingWindow);
    w.addF32(a + "attention.layer_norm_rms_epsilon", p.rmsEps);
    if (p.isMoe()) {
        w.addU32(a + "expert_count", p.nExperts);
        w.addU32(a + "expert_used_count", p.nExpertsUsed);
        w.addU32(a + "expert_feed_forward_length", p.expertFfn);
    }
    if (p.hybrid.enabled()) writeHybridMetadata(w, p);
    w.addU32(a + "vocab_size", p.vocab);
    w.addU32("general.file_type", mix.fileType);
    w.addU32("general.quantization_version", kQuantizationVersion);
}

WeightInit initFor(const PlannedTensor& t, const ModelPreset& p) {
    if (auto init = hybridInit(t)) return *init;
    switch (t.role) {
    case TensorRole::TokenEmbedding: return {0.0f, 1.0f};  // rows of RMS ~1
    case TensorRole::Norm: return {1.0f, 0.05f};
    case TensorRole::Output:
    case TensorRole::Router: return {0.0f, 1.0f / std::sqrt(static_cast<float>(p.dModel))};
    case TensorRole::Weight: break;
    }
    return {0.0f, 1.0f / std::sqrt(static_cast<float>(t.ne[0]))};
}

struct TensorJob {
    GgmlType type;
    WeightInit init;
    uint64_t elements;
};

struct Chunk {
    size_t tensor;
    uint64_t firstUnit;
    uint64_t nUnits;
};

uint64_t unitsPerChunk(GgmlType type) { return std::max<uint64_t>(1, kChunkBytes / genUnitBytes(type)); }

std::vector<Chunk> splitIntoChunks(const std::vector<TensorJob>& jobs) {
    std::vector<Chunk> chunks;
    for (size_t i = 0; i < jobs.size(); ++i) {
        const uint64_t units = genUnitCount(jobs[i].type, jobs[i].elements);
        const uint64_t perChunk = unitsPerChunk(jobs[i].type);
        for (uint64_t u = 0; u < units; u += perChunk) chunks.push_back({i, u, std::min(perChunk, units - u)});
    }
    return chunks;
}

// Progress lines on stderr: at most one every two seconds, plus a summary.
class Progress {
public:
    Progress(bool enabled, uint64_t total) : enabled_(enabled), total_(total), start_(Clock::now()), last_(start_) {}
    void advance(uint64_t bytes) {
        done_ += bytes;
        const auto now = Clock::now();
        if (!enabled_ || now - last_ < std::chrono::seconds(2)) return;
        last_ = now;
        std::fprintf(stderr, "make-model: %.2f / %.2f GB (%.0f%%), %.0f MB/s\n", done_ / 1e9, total_ / 1e9,
                     100.0 * done_ / std::max<uint64_t>(1, total_), done_ / 1e6 / seconds());
    }
    double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

private:
    using Clock = std::chrono::steady_clock;
    bool enabled_;
    uint64_t total_, done_ = 0;
    Clock::time_point start_, last_;
};

}  // namespace

namespace {

// Generates the tensors' blocks on all cores and streams them to the writer in file order.
void streamTensorData(GgufWriter& writer, const std::vector<TensorJob>& jobs, const MakeModelOptions& o,
                      Progress& progress) {
    const auto chunks = splitIntoChunks(jobs);
    uint64_t maxChunk = 0;
    for (const auto& job : jobs) maxChunk = std::max(maxChunk, unitsPerChunk(job.type) * genUnitBytes(job.type));
    const unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
    OrderedPipeline pipeline{chunks.size(), maxChunk, threads, nullptr, nullptr};
    pipeline.produce = [&](size_t k, uint8_t* out) {
        const Chunk& c = chunks[k];
        const TensorJob& job = jobs[c.tensor];
        return generateUnits(job.type, job.init, o.seed, c.tensor, job.elements, c.firstUnit, c.nUnits, out);
    };
    pipeline.consume = [&](size_t k, std::span<const uint8_t> bytes) {
        writer.writeTensorData(chunks[k].tensor, bytes);
        progress.advance(bytes.size());
    };
    runOrderedPipeline(pipeline);
}

}  // namespace

void makeModel(const MakeModelOptions& o) {
    ModelPreset preset = resolvePreset(o);
    const auto mix = findQuantMix(o.quantMix);
    if (!mix) throw ModelError("make-model: unknown quant mix '" + o.quantMix + "'; known: " + joinNames(quantMixes()));
    if (o.outputPath.empty()) throw ModelError("make-model: no output path");
    const TokenizerData tokenizer = resolveTokenizer(o, preset);

    GgufWriter writer(o.outputPath);
    writeModelMetadata(writer, preset, *mix);
    writeTokenizerMetadata(writer, tokenizer);
    std::vector<TensorJob> jobs;
    for (const auto& t : planTensors(preset)) {
        const GgmlType type = chooseTensorType(*mix, t, preset);
        writer.addTensor(t.name, type, std::span<const uint64_t>(t.ne.data(), t.nDims));
        jobs.push_back({type, initFor(t, preset), t.elements()});
    }
    writer.writeHeader();
    Progress progress(o.progress, writer.fileSize());
    streamTensorData(writer, jobs, o, progress);
    writer.finish();
    if (o.progress) {
        std::fprintf(stderr, "make-model: wrote %s (%s, %s, %zu tensors, %.2f GB) in %.1f s\n", o.outputPath.c_str(),
                     preset.name.c_str(), mix->name.c_str(), jobs.size(), writer.fileSize() / 1e9, progress.seconds());
    }
}

std::vector<MakeModelChoice> makeModelPresetChoices() {
    std::vector<MakeModelChoice> out;
    for (const auto& p : modelPresets()) out.push_back({p.name, p.description});
    return out;
}

std::vector<MakeModelChoice> makeModelQuantMixChoices() {
    std::vector<MakeModelChoice> out;
    for (const auto& m : quantMixes()) out.push_back({m.name, m.description});
    return out;
}

std::vector<std::string> makeModelPresets() {
    std::vector<std::string> out;
    for (const auto& p : modelPresets()) out.push_back(p.name);
    return out;
}

std::vector<std::string> makeModelQuantMixes() {
    std::vector<std::string> out;
    for (const auto& m : quantMixes()) out.push_back(m.name);
    return out;
}

}  // namespace zinc::model
