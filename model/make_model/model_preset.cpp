#include "model/make_model/model_preset.h"

namespace zinc::model {

// Real shapes from each model's config.json on Hugging Face (Qwen/Qwen3-0.6B, Qwen/Qwen3-8B,
// Qwen/Qwen3-30B-A3B): hidden_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads, head_dim, intermediate_size, moe_intermediate_size, num_experts,
// num_experts_per_tok, vocab_size, tie_word_embeddings, rope_theta, rms_norm_eps,
// max_position_embeddings. The tiny ones match ../shared/models/qwen3-tiny.gguf and
// qwen3moe-tiny.gguf.
const std::vector<ModelPreset>& modelPresets() {
    static const std::vector<ModelPreset> presets = [] {
        std::vector<ModelPreset> p;
        ModelPreset qwen3;
        qwen3.arch = "qwen3";
        qwen3.qkNorm = true;
        qwen3.ropeBase = 1e6f;
        qwen3.rmsEps = 1e-6f;
        qwen3.contextLength = 40960;
        qwen3.vocab = 151936;
        qwen3.headDim = 128;
        qwen3.tokenizerPre = "qwen2";

        ModelPreset q06 = qwen3;
        q06.name = "qwen3-0.6b";
        q06.description = "Qwen3-0.6B: 28 layers, d 1024, 16/8 heads, ffn 3072, tied embeddings";
        q06.nLayers = 28, q06.dModel = 1024, q06.nHeads = 16, q06.nKvHeads = 8, q06.ffn = 3072;
        q06.tiedEmbeddings = true;
        p.push_back(q06);

        ModelPreset q8 = qwen3;
        q8.name = "qwen3-8b";
        q8.description = "Qwen3-8B: 36 layers, d 4096, 32/8 heads, ffn 12288";
        q8.nLayers = 36, q8.dModel = 4096, q8.nHeads = 32, q8.nKvHeads = 8, q8.ffn = 12288;
        p.push_back(q8);

        ModelPreset q30 = qwen3;
        q30.name = "qwen3-30b-a3b";
        q30.description = "Qwen3-30B-A3B (qwen3moe): 48 layers, d 2048, 32/4 heads, 128 experts (8 used) of ffn 768";
        q30.arch = "qwen3moe";
        q30.nLayers = 48, q30.dModel = 2048, q30.nHeads = 32, q30.nKvHeads = 4, q30.ffn = 6144;
        q30.nExperts = 128, q30.nExpertsUsed = 8, q30.expertFfn = 768;
        p.push_back(q30);

        ModelPreset tiny = qwen3;
        tiny.name = "qwen3-tiny";
        tiny.description = "tiny qwen3: 4 layers, d 256, 4/2 heads of 64, ffn 768, vocab 1024";
        tiny.nLayers = 4, tiny.dModel = 256, tiny.nHeads = 4, tiny.nKvHeads = 2, tiny.headDim = 64;
        tiny.ffn = 768, tiny.vocab = 1024;
        p.push_back(tiny);

        // Heads of 256, the width of Qwen3.5/3.6's gated attention and Gemma 3's: wider than the
        // GPU attention kernels' workgroups, which the 64-wide tiny heads never show.
        ModelPreset wideHeads = tiny;
        wideHeads.name = "qwen3-tiny-h256";
        wideHeads.description = "tiny qwen3 with 256-wide heads: 2 layers, d 256, 4/2 heads of 256, ffn 768, vocab 1024";
        wideHeads.nLayers = 2, wideHeads.headDim = 256;
        p.push_back(wideHeads);

        // Heads of 80 (a multiple of 16, not of 32): the split attention's keys read 4 bytes at a
        // time beside query quarters of 5 vec4s (attention_split.comp's qIndex interleaving
        // without its 16-byte key loads), which the 64- and 256-wide heads never show.
        ModelPreset heads80 = tiny;
        heads80.name = "qwen3-tiny-h80";
        heads80.description = "tiny qwen3 with 80-wide heads: 2 layers, d 256, 4/2 heads of 80, ffn 768, vocab 1024";
        heads80.nLayers = 2, heads80.headDim = 80;
        p.push_back(heads80);

        // Heads of 128, the real models' (Qwen3, Llama 3): attention.comp quantizes its output
        // 2 heads a workgroup (QUANT), where the 64-wide tiny heads take 4.
        ModelPreset heads128 = tiny;
        heads128.name = "qwen3-tiny-h128";
        heads128.description = "tiny qwen3 with 128-wide heads: 2 layers, d 256, 4/2 heads of 128, ffn 768, vocab 1024";
        heads128.nLayers = 2, heads128.headDim = 128;
        p.push_back(heads128);

        // Rows of 4,096 values, as the 8B's: 4 units of 32 values for each of a row's 32 GPU
        // matvec threads, two of them in flight (matvec_rows.comp PF), where the 256-wide tiny
        // rows give a thread one unit.
        ModelPreset wideRows = tiny;
        wideRows.name = "qwen3-tiny-d4096";
        wideRows.description = "tiny qwen3 with 4096-wide rows: 2 layers, d 4096, 4/2 heads of 64, ffn 512, vocab 1024";
        wideRows.nLayers = 2, wideRows.dModel = 4096, wideRows.ffn = 512;
        p.push_back(wideRows);

        // An FFN of 8,192 rows, as wide as the big models' (Qwen3-8B: 12,288): a one-token step
        // multiplies gate and up as two matvecs there (vulkan GraphRecorder::loweredFor), where
        // the tiny models' 768 rows take them as one SwiGLU pair.
        ModelPreset wideFfn = tiny;
        wideFfn.name = "qwen3-tiny-ffn8192";
        wideFfn.description = "tiny qwen3 with an 8192-row FFN: 2 layers, d 256, 4/2 heads of 64, ffn 8192, vocab 1024";
        wideFfn.nLayers = 2, wideFfn.ffn = 8192;
        p.push_back(wideFfn);

        // Eight query heads on one KV head (30B-A3B's and Qwen3.6's GQA group): the split
        // attention's head blocks of 8, which the groups of 2 of the tiny models never show.
        ModelPreset gqa8 = tiny;
        gqa8.name = "qwen3-tiny-gqa8";
        gqa8.description = "tiny qwen3 with a GQA group of 8: 2 layers, d 256, 8/1 heads of 64, ffn 768, vocab 1024";
        gqa8.nLayers = 2, gqa8.nHeads = 8, gqa8.nKvHeads = 1;
        p.push_back(gqa8);

        ModelPreset moeTiny = tiny;
        moeTiny.name = "qwen3moe-tiny";
        moeTiny.description = "tiny qwen3moe: 4 layers, d 256, 4/2 heads of 64, 8 experts (2 used) of ffn 256";
        moeTiny.arch = "qwen3moe";
        moeTiny.nExperts = 8, moeTiny.nExpertsUsed = 2, moeTiny.expertFfn = 256;
        p.push_back(moeTiny);

        // The router of the big MoE models (Qwen3.6: 256 experts, 8 used; 30B-A3B: 128), which
        // the 8 experts of qwen3moe-tiny never rank: the GPU top-k over a real expert count.
        ModelPreset moeRouter = moeTiny;
        moeRouter.name = "qwen3moe-tiny-256";
        moeRouter.description = "tiny qwen3moe with a big model's router: 2 layers, d 256, 4/2 heads of 64, 256 experts (8 used) of ffn 256";
        moeRouter.nLayers = 2;
        moeRouter.nExperts = 256, moeRouter.nExpertsUsed = 8;
        p.push_back(moeRouter);

        // Qwen3.6-35B-A3B (same shape as Qwen3.5-35B-A3B; model card and the Qwen3.5 MoE config):
        // 40 layers = 10 x (3 gated DeltaNet + 1 gated attention), d 2048, attention 16/2 heads
        // of 256 with 64 rotary dims (partial_rotary_factor 0.25, mrope_section [11, 11, 10],
        // interleaved = IMRoPE), rope_theta 1e7; DeltaNet 16 key / 32 value heads of 128, conv 4;
        // 256 experts, 8 used, ffn 512, one shared expert of 512; vocab 248320; context 262144.
        ModelPreset q36 = qwen3;
        q36.name = "qwen3.6-35b-a3b";
        q36.description = "Qwen3.6-35B-A3B (qwen35moe): 40 layers (3 DeltaNet : 1 attention), d 2048, 16/2 heads of 256, "
                          "DeltaNet 16/32 heads of 128, 256 experts (8 used) of ffn 512 + shared 512";
        q36.arch = "qwen35moe";
        q36.nLayers = 40, q36.dModel = 2048, q36.nHeads = 16, q36.nKvHeads = 2, q36.headDim = 256;
        q36.ffn = 0, q36.vocab = 248320, q36.contextLength = 262144, q36.ropeBase = 1e7f;
        q36.nExperts = 256, q36.nExpertsUsed = 8, q36.expertFfn = 512;
        q36.tokenizerPre = "qwen35";
        q36.hybrid = HybridShape{4, 64, {11, 11, 10, 0}, 4, 128, 16, 32, 512};
        p.push_back(q36);

        // A dense Qwen3.5 of the 9B class (qwen35): the same layer pattern and heads with a dense
        // SwiGLU FFN. Shape: 32 layers, d 4096, attention 16/4 heads of 256 (64 rotary dims),
        // DeltaNet 16 key / 32 value heads of 128, ffn 12288, vocab 248320.
        ModelPreset q9 = q36;
        q9.name = "qwen3.5-9b";
        q9.description = "Qwen3.5-9B-class dense hybrid (qwen35): 32 layers (3 DeltaNet : 1 attention), d 4096, "
                         "16/4 heads of 256, DeltaNet 16/32 heads of 128, ffn 12288";
        q9.arch = "qwen35";
        q9.nLayers = 32, q9.dModel = 4096, q9.nHeads = 16, q9.nKvHeads = 4, q9.ffn = 12288;
        q9.nExperts = 0, q9.nExpertsUsed = 0, q9.expertFfn = 0;
        q9.hybrid.sharedFfn = 0;
        p.push_back(q9);

        // Tiny qwen35moe with the layout of ../shared/models/qwen35moe-tiny.gguf (for tests).
        ModelPreset q35Tiny = q36;
        q35Tiny.name = "qwen35moe-tiny";
        q35Tiny.description = "tiny qwen35moe: 4 layers (3 DeltaNet : 1 attention), d 256, 4/2 heads of 128, "
                              "DeltaNet 2/4 heads of 64, 8 experts (2 used) of ffn 256 + shared 512, vocab 1024";
        q35Tiny.nLayers = 4, q35Tiny.dModel = 256, q35Tiny.nHeads = 4, q35Tiny.nKvHeads = 2, q35Tiny.headDim = 128;
        q35Tiny.vocab = 1024, q35Tiny.contextLength = 4096, q35Tiny.nExperts = 8, q35Tiny.nExpertsUsed = 2;
        q35Tiny.expertFfn = 256;
        q35Tiny.hybrid = HybridShape{4, 32, {6, 5, 5, 0}, 4, 64, 2, 4, 512};
        p.push_back(q35Tiny);

        // meta-llama/Llama-3.1-8B config.json: 32 layers, hidden 4096, 32/8 heads (head_dim 128),
        // intermediate 14336, vocab 128256, rope_theta 500000, rms_norm_eps 1e-5, 131072 positions,
        // rope_scaling llama3 (here the rope_freqs tensor llama.cpp's converter writes for it).
        ModelPreset llama31;
        llama31.name = "llama-3.1-8b";
        llama31.description = "Llama-3.1-8B: 32 layers, d 4096, 32/8 heads of 128, ffn 14336, vocab 128256, rope_freqs";
        llama31.arch = "llama";
        llama31.nLayers = 32, llama31.dModel = 4096, llama31.nHeads = 32, llama31.nKvHeads = 8, llama31.headDim = 128;
        llama31.ffn = 14336, llama31.vocab = 128256, llama31.contextLength = 131072;
        llama31.ropeBase = 500000.0f, llama31.rmsEps = 1e-5f, llama31.ropeFreqs = true;
        llama31.tokenizerPre = "llama-bpe";
        p.push_back(llama31);

        // google/gemma-3-12b-pt and -4b-pt config.json (text_config): head_dim 256, sliding_window
        // 1024 with every 6th layer global, rope_theta 1e6 with linear scaling 8 (global layers),
        // rope_local_base_freq 1e4, rms_norm_eps 1e-6, vocab 262208, tied embeddings, 131072
        // positions. The built-in BPE vocabulary stands in for Gemma's SentencePiece one.
        ModelPreset gemma;
        gemma.arch = "gemma3";
        gemma.headDim = 256, gemma.vocab = 262208, gemma.contextLength = 131072;
        gemma.ropeBase = 1e6f, gemma.rmsEps = 1e-6f, gemma.tiedEmbeddings = true, gemma.qkNorm = true;
        gemma.postNorms = true, gemma.slidingWindow = 1024, gemma.ropeLinearFactor = 8.0f;
        gemma.tokenizerPre = "llama-bpe";

        auto gemmaOfSize = [&](const char* name, const char* description, uint32_t layers, uint32_t d, uint32_t heads,
                               uint32_t ffn) {
            ModelPreset g = gemma;
            g.name = name, g.description = description;
            g.nLayers = layers, g.dModel = d, g.nHeads = heads, g.nKvHeads = heads / 2, g.ffn = ffn;
            p.push_back(g);
        };
        gemmaOfSize("gemma-3-12b", "Gemma-3-12B (gemma3): 48 layers (5 sliding-window : 1 global), d 3840, 16/8 heads of 256, "
                    "ffn 15360, window 1024, tied embeddings", 48, 3840, 16, 15360);
        gemmaOfSize("gemma-3-4b", "Gemma-3-4B (gemma3): 34 layers (5 sliding-window : 1 global), d 2560, 8/4 heads of 256, "
                    "ffn 10240, window 1024, tied embeddings", 34, 2560, 8, 10240);

        // gemma3-tiny's layout (../shared/models/gemma3-tiny.gguf): window 8, for tests.
        ModelPreset gemmaTiny = gemma;
        gemmaTiny.name = "gemma3-tiny";
        gemmaTiny.description = "tiny gemma3: 6 layers (5 sliding-window : 1 global), d 256, 4/2 heads of 32, ffn 512, "
                                "window 8, vocab 1024";
        gemmaTiny.nLayers = 6, gemmaTiny.dModel = 256, gemmaTiny.nHeads = 4, gemmaTiny.nKvHeads = 2, gemmaTiny.headDim = 32;
        gemmaTiny.ffn = 512, gemmaTiny.vocab = 1024, gemmaTiny.contextLength = 4096, gemmaTiny.slidingWindow = 8;
        p.push_back(gemmaTiny);
        // The same with a window longer than the GPU tiers' exact-attention length (256), so a
        // sliding layer's decode attention is split across its ring: for tests.
        ModelPreset gemmaTinyLong = gemmaTiny;
        gemmaTinyLong.name = "gemma3-tiny-long-window";
        gemmaTinyLong.description = "tiny gemma3 with a window of 320 (split attention over the ring), for tests";
        gemmaTinyLong.slidingWindow = 320;
        p.push_back(gemmaTinyLong);

        ModelPreset llama = llama31;  // Llama 2's rope: base 1e4, no rope_freqs
        llama.name = "llama-tiny";
        llama.description = "tiny llama: 4 layers, d 256, 8/4 heads of 32, ffn 768, vocab 1024";
        llama.nLayers = 4, llama.dModel = 256, llama.nHeads = 8, llama.nKvHeads = 4, llama.headDim = 32;
        llama.ffn = 768, llama.vocab = 1024, llama.contextLength = 2048;
        llama.ropeBase = 10000.0f, llama.ropeFreqs = false;
        p.push_back(llama);
        return p;
    }();
    return presets;
}

std::optional<ModelPreset> findModelPreset(std::string_view name) {
    for (const auto& p : modelPresets())
        if (p.name == name) return p;
    return std::nullopt;
}

}  // namespace zinc::model
