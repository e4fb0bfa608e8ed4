// Inputs the fuzz targets (tests/fuzz) found, kept as the bytes they change in the embedded
// code object, with what they showed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/code_object.h"
#include "kernels/embedded.h"

namespace zinc::kernels::test {
namespace {

// The embedded gfx1100 object with the first occurrence of each `from` replaced by `to`
// (same length).
std::vector<uint8_t> patched(std::initializer_list<std::pair<std::string, std::string>> edits) {
    const auto original = embeddedCodeObject("gfx1100");
    std::vector<uint8_t> b(original.begin(), original.end());
    for (const auto& [from, to] : edits) {
        const auto at = std::search(b.begin(), b.end(), from.begin(), from.end(),
                                    [](uint8_t byte, char c) { return byte == static_cast<uint8_t>(c); });
        EXPECT_NE(at, b.end()) << "no '" << from << "' in the object";
        if (at != b.end()) std::copy(to.begin(), to.end(), at);
    }
    return b;
}

std::string fuzzedErrorOf(const std::vector<uint8_t>& b) {
    try {
        CodeObject::parse(b, "fuzzed.hsaco", {.hiddenArgs = {"hidden_block_count_x"}});
    } catch (const CodeObjectError& e) {
        return e.what();
    }
    return "(parsed)";
}

// fuzz_code_object: metadata naming two kernels 'embed_q5_k' (msgpack fixstr 0xAA + the name)
// was accepted, and find() returned only the first. Now refused.
TEST(FuzzRegression, KernelListedTwiceIsRefused) {
    const std::string e = fuzzedErrorOf(patched({{"\xAA" "embed_q4_k", "\xAA" "embed_q5_k"}}));
    EXPECT_NE(e.find("code object fuzzed.hsaco: kernel 'embed_q5_k' is listed twice in amdhsa.kernels"), std::string::npos) << e;
}

// The same input's second change: two kernels whose .symbol is matvec_f32.kd share an entry
// address, so the simulated CP (findByEntry) would run one with the other's arguments.
TEST(FuzzRegression, TwoKernelsAtOneEntryAreRefused) {
    const std::string e = fuzzedErrorOf(patched({{"\xAD" "matvec_f16.kd", "\xAD" "matvec_f32.kd"}}));
    EXPECT_NE(e.find("have the same entry address"), std::string::npos) << e;
    EXPECT_NE(e.find("(descriptor 'matvec_f32.kd')"), std::string::npos) << e;
}

}  // namespace
}  // namespace zinc::kernels::test
