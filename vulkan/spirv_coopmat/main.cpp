// spirv_coopmat_khr IN.spv OUT.h NAME: glslang's NV cooperative-matrix module -> the KHR form,
// written as `const uint32_t NAME[]` in a header like glslang's --vn output.
#include <cstdio>
#include <fstream>
#include <iterator>

#include "vulkan/spirv_coopmat/coopmat_khr.h"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s IN.spv OUT.h NAME\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.eof() && !in.good()) {
        std::fprintf(stderr, "spirv_coopmat_khr: cannot read %s\n", argv[1]);
        return 1;
    }
    std::vector<uint32_t> words(bytes.size() / 4);
    for (size_t i = 0; i < words.size(); ++i)
        for (int b = 0; b < 4; ++b) words[i] |= uint32_t(uint8_t(bytes[4 * i + b])) << (8 * b);
    try {
        words = zinc::vk::spirv::coopmatNvToKhr(words);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[1], e.what());
        return 1;
    }
    std::FILE* out = std::fopen(argv[2], "w");
    if (!out) {
        std::fprintf(stderr, "spirv_coopmat_khr: cannot write %s\n", argv[2]);
        return 1;
    }
    std::fprintf(out, "#pragma once\n// %s rewritten to SPV_KHR_cooperative_matrix by spirv_coopmat_khr\n#include <cstdint>\nconst uint32_t %s[] = {", argv[1], argv[3]);
    for (size_t i = 0; i < words.size(); ++i) std::fprintf(out, "%s0x%08x", i % 8 ? "," : (i ? ",\n\t" : "\n\t"), words[i]);
    std::fprintf(out, "\n};\n");
    return std::fclose(out) == 0 ? 0 : 1;
}
