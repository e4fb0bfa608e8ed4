#pragma once
// make-model: writes a GGUF model with real shapes, real llama.cpp metadata keys and tensor
// names, a real tokenizer, and random weights of sensible scale, for testing and benchmarking
// the runtime without downloading models. Weights are generated directly as quantized blocks
// on all cores and streamed to disk; the output is a pure function of the options.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zinc::model {

struct MakeModelOptions {
    std::string preset;                 // makeModelPresets(): "qwen3-8b", "qwen3-tiny", ...
    std::string outputPath;
    std::string quantMix = "q4_k_m";    // makeModelQuantMixes(): "q4_k_m", "q8_0", "f16", ...
    uint64_t seed = 0;
    std::string tokenizerJson;          // optional HF tokenizer.json (or .json.gz)
    std::string tokenizerConfigJson;    // optional tokenizer_config.json beside it
    std::optional<uint32_t> layers;     // override the preset's block count
    std::optional<uint32_t> contextLength;
    unsigned threads = 0;               // 0: one per core
    bool progress = true;               // progress and a summary on stderr
};

// Writes the model; throws ModelError (unknown preset or mix, bad tokenizer, bad override)
// or GgufError (I/O). A failed run leaves no output file.
void makeModel(const MakeModelOptions& options);

struct MakeModelChoice {
    std::string name;
    std::string description;  // one line
};
std::vector<std::string> makeModelPresets();
std::vector<std::string> makeModelQuantMixes();
std::vector<MakeModelChoice> makeModelPresetChoices();
std::vector<MakeModelChoice> makeModelQuantMixChoices();

}  // namespace zinc::model
