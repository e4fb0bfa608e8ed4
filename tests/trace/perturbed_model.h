#pragma once
// The perturbed-weight fixture: stories260K (F32 weights) with one layer's ffn_down negated,
// written byte for byte otherwise, so `ab` against the original must name that layer first.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/model.h"
#include "tests/test_paths.h"

namespace zinc::test {

inline std::string perturbedStories(int layer) {
    const std::string source = sharedPath("models/stories260K.gguf");
    const auto path = scratchDir() / ("stories260K-blk" + std::to_string(layer) + "-ffn_down-negated.gguf");
    if (std::filesystem::exists(path)) return path.string();
    const auto original = model::Model::load(source);
    const model::WeightRef& w = original->weights().layers.at(static_cast<size_t>(layer)).ffnDown;
    if (w.type != model::GgmlType::F32) throw std::runtime_error("perturbedStories: " + w.name + " is not F32");
    std::ifstream in(source, std::ios::binary);
    std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (w.fileOffset + w.nbytes > bytes.size()) throw std::runtime_error("perturbedStories: " + w.name + " lies past the file");
    for (uint64_t at = w.fileOffset; at < w.fileOffset + w.nbytes; at += 4) {
        float v;
        std::memcpy(&v, bytes.data() + at, 4);
        v = -v;
        std::memcpy(bytes.data() + at, &v, 4);
    }
    const auto partial = path.string() + ".part";  // renamed when whole: a crash leaves no half file
    std::ofstream(partial, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::filesystem::rename(partial, path);
    return path.string();
}

}  // namespace zinc::test
