// Hostile and broken files: each is rejected with a GgufError that starts with the path and
// names the problem; none crashes (the suite runs cleanly under ASan/UBSan builds too).
#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "tests/gguf/gguf_test_util.h"

namespace zinc::model {
namespace {

using test::Bytes;
using test::expectOpenFails;
using test::poke;
using test::smallModelBytes;
using test::tensorInfoFields;

// Offsets inside a tensor info, counted from the end of its name.
constexpr size_t kNDims = 0;
constexpr size_t kNe0 = 4;
size_t typeField(uint32_t nDims) { return 4 + 8 * nDims; }
size_t offsetField(uint32_t nDims) { return typeField(nDims) + 4; }

// Offset of the byte right after a metadata key.
size_t afterKey(const Bytes& b, std::string_view key) { return tensorInfoFields(b, key); }

TEST(GgufCorrupt, SmallModelIsValid) {
    const std::string path = test::scratchFile("valid.gguf");
    test::writeBytes(path, smallModelBytes());
    EXPECT_EQ(test::openError(path), "");
}

TEST(GgufCorrupt, EmptyAndMissingFiles) {
    expectOpenFails({}, "truncated at offset 0 reading the magic");
    const std::string missing = test::scratchFile("does-not-exist.gguf");
    EXPECT_NE(test::openError(missing).find(missing + ": cannot open"), std::string::npos);
}

TEST(GgufCorrupt, WrongMagic) {
    Bytes b = smallModelBytes();
    b[0] = 'X';
    expectOpenFails(b, "bad magic \"XGUF\"");
}

TEST(GgufCorrupt, UnsupportedVersionsAndBigEndian) {
    Bytes b = smallModelBytes();
    poke<uint32_t>(b, 4, 1);
    expectOpenFails(b, "unsupported GGUF version 1");
    poke<uint32_t>(b, 4, 4);
    expectOpenFails(b, "unsupported GGUF version 4");
    poke<uint32_t>(b, 4, 0x03000000u);  // version 3 written big-endian
    expectOpenFails(b, "big-endian");
}

TEST(GgufCorrupt, AbsurdCounts) {
    Bytes b = smallModelBytes();
    poke<uint64_t>(b, 16, 1ull << 60);
    expectOpenFails(b, "absurd metadata count n_kv = 1152921504606846976");
    b = smallModelBytes();
    poke<uint64_t>(b, 8, ~0ull);
    expectOpenFails(b, "absurd tensor count n_tensors");
}

TEST(GgufCorrupt, AbsurdStringLength) {
    Bytes b = smallModelBytes();
    poke<uint64_t>(b, 24, 1ull << 62);  // length of the first key
    expectOpenFails(b, "absurd string length 4611686018427387904 at offset 24 (key of metadata pair #0)");
    b = smallModelBytes();
    poke<uint64_t>(b, afterKey(b, "arr.str") + 16, 1ull << 40);  // type, elem type, count, then "x"
    expectOpenFails(b, "element of array #0 'arr.str'");
}

TEST(GgufCorrupt, AbsurdArrayLength) {
    Bytes b = smallModelBytes();
    poke<uint64_t>(b, afterKey(b, "arr.i32") + 8, 1ull << 61);
    expectOpenFails(b, "absurd length of array 'arr.i32' (INT32) = 2305843009213693952");
    b = smallModelBytes();
    poke<uint64_t>(b, afterKey(b, "arr.str") + 8, 1ull << 61);
    expectOpenFails(b, "absurd length of array 'arr.str' (STRING)");
}

TEST(GgufCorrupt, BadValueTypes) {
    Bytes b = smallModelBytes();
    poke<uint32_t>(b, afterKey(b, "key.a"), 13);
    expectOpenFails(b, "key 'key.a' has unknown value type 13");
    b = smallModelBytes();
    poke<uint32_t>(b, afterKey(b, "arr.i32") + 4, 9);
    expectOpenFails(b, "key 'arr.i32' is an array of arrays");
    b = smallModelBytes();
    poke<uint32_t>(b, afterKey(b, "arr.i32") + 4, 99);
    expectOpenFails(b, "array key 'arr.i32' has unknown element type 99");
}

TEST(GgufCorrupt, DuplicateKey) {
    Bytes b = smallModelBytes();
    b[test::findText(b, "key.b") + 4] = 'a';
    expectOpenFails(b, "duplicate key 'key.a'");
}

TEST(GgufCorrupt, BadAlignment) {
    Bytes b = smallModelBytes(64);
    const size_t value = afterKey(b, "general.alignment") + 4;
    poke<uint32_t>(b, value, 48);
    expectOpenFails(b, "key 'general.alignment' = 48 is not a non-zero power of two");
    poke<uint32_t>(b, value, 0);
    expectOpenFails(b, "key 'general.alignment' = 0 is not a non-zero power of two");
}

TEST(GgufCorrupt, DuplicateTensor) {
    Bytes b = smallModelBytes();
    b[tensorInfoFields(b, "t1") - 1] = '0';
    expectOpenFails(b, "duplicate tensor 't0'");
}

TEST(GgufCorrupt, BadDimensionCounts) {
    Bytes b = smallModelBytes();
    const size_t t0 = tensorInfoFields(b, "t0");
    poke<uint32_t>(b, t0 + kNDims, 0);
    expectOpenFails(b, "tensor 't0' has n_dims = 0");
    poke<uint32_t>(b, t0 + kNDims, 5);
    expectOpenFails(b, "tensor 't0' has n_dims = 5");
}

TEST(GgufCorrupt, ZeroAndAbsurdDimensions) {
    Bytes b = smallModelBytes();
    const size_t t0 = tensorInfoFields(b, "t0");
    poke<uint64_t>(b, t0 + kNe0 + 8, 0);
    expectOpenFails(b, "tensor 't0' has a zero dimension (ne[1] = 0)");
    poke<uint64_t>(b, t0 + kNe0 + 8, 1ull << 63);
    expectOpenFails(b, "tensor 't0' has an absurd dimension (ne[1] = 9223372036854775808)");
}

TEST(GgufCorrupt, SizeOverflow) {
    Bytes b = smallModelBytes();
    const size_t t0 = tensorInfoFields(b, "t0");
    poke<uint64_t>(b, t0 + kNe0, 1ull << 32);
    poke<uint64_t>(b, t0 + kNe0 + 8, 1ull << 32);
    expectOpenFails(b, "tensor 't0' element count overflows (shape [4294967296, 4294967296])");
    poke<uint64_t>(b, t0 + kNe0, 1ull << 31);
    poke<uint64_t>(b, t0 + kNe0 + 8, 1ull << 31);  // 2^62 F32 elements: 2^64 bytes
    expectOpenFails(b, "tensor 't0' size in bytes overflows");
}

TEST(GgufCorrupt, RowNotAMultipleOfTheBlock) {
    Bytes b = smallModelBytes();
    poke<uint64_t>(b, tensorInfoFields(b, "t1") + kNe0, 33);
    expectOpenFails(b, "tensor 't1' row length ne[0] = 33 is not a multiple of the Q8_0 block size 32");
}

TEST(GgufCorrupt, UnknownTensorType) {
    Bytes b = smallModelBytes();
    poke<uint32_t>(b, tensorInfoFields(b, "t0") + typeField(2), 123);
    expectOpenFails(b, "unknown tensor type 123 for tensor 't0'");
}

TEST(GgufCorrupt, UncomputableTypesAreAccepted) {
    Bytes b = smallModelBytes();
    poke<uint32_t>(b, tensorInfoFields(b, "t1") + typeField(2), static_cast<uint32_t>(GgmlType::IQ4_NL));
    const std::string path = test::scratchFile("iq4nl.gguf");
    test::writeBytes(path, b);  // IQ4_NL blocks are 18 bytes per 32, Q8_0 34: still fits the file
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->tensor("t1").type, GgmlType::IQ4_NL);
    EXPECT_EQ(f->tensor("t1").nbytes, 2u * 18);
}

TEST(GgufCorrupt, MisalignedOffset) {
    Bytes b = smallModelBytes();
    const size_t field = tensorInfoFields(b, "t2") + offsetField(1);
    uint64_t offset = 0;
    std::memcpy(&offset, b.data() + field, 8);
    poke<uint64_t>(b, field, offset + 4);
    expectOpenFails(b, "tensor 't2' offset " + std::to_string(offset + 4) + " is not a multiple of the alignment 32");
}

TEST(GgufCorrupt, TensorPastEndOfFile) {
    Bytes b = smallModelBytes();
    poke<uint64_t>(b, tensorInfoFields(b, "t2") + offsetField(1), 1ull << 20);
    expectOpenFails(b, "tensor 't2' data at offset 1048576 (16 bytes");
    expectOpenFails(b, "runs past the end of the file");
    poke<uint64_t>(b, tensorInfoFields(b, "t2") + offsetField(1), ~0ull - 31);  // offset + size overflows
    expectOpenFails(b, "runs past the end of the file");
}

TEST(GgufCorrupt, OverlappingTensors) {
    Bytes b = smallModelBytes();
    poke<uint64_t>(b, tensorInfoFields(b, "t1") + offsetField(2), 32);  // t0 is 64 bytes at 0
    expectOpenFails(b, "tensors 't0' (offset 0, 64 bytes) and 't1' (offset 32) overlap");
}

// Cuts `full` at each offset in `cuts` (descending, so one file is shortened in place) and
// expects every cut before `mustFailBelow` to be reported as truncated.
void expectCutsFail(const Bytes& full, std::vector<uint64_t> cuts, uint64_t mustFailBelow, const std::string& name) {
    const std::string path = test::scratchFile(name);
    test::writeBytes(path, full);
    std::sort(cuts.rbegin(), cuts.rend());
    int failures = 0;
    for (uint64_t cut : cuts) {
        if (cut >= full.size()) continue;
        std::filesystem::resize_file(path, cut);
        const std::string msg = test::openError(path);
        if (cut >= mustFailBelow && msg.empty()) continue;  // cut inside trailing padding
        ASSERT_FALSE(msg.empty()) << "cut at " << cut << " opened";
        ASSERT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
        ASSERT_NE(msg.find("truncated"), std::string::npos) << "cut at " << cut << ": " << msg;
        ++failures;
    }
    EXPECT_GT(failures, 0);
}

TEST(GgufCorrupt, SmallModelCutAtEveryOffset) {
    const Bytes full = smallModelBytes();
    std::vector<uint64_t> cuts(full.size());
    std::iota(cuts.begin(), cuts.end(), 0);
    expectCutsFail(full, cuts, full.size() - 16, "cut-small.gguf");  // t2's 16 bytes of padding may go
}

TEST(GgufCorrupt, RealFilesCutAtManyOffsets) {
    struct Case {
        const char* file;
        uint64_t headerStep;
    };
    for (const Case c : {Case{"models/stories260K.gguf", 7}, Case{"models/llama-2-tiny-random.gguf", 997},
                         Case{"models/qwen3-tiny.gguf", 13}, Case{"models/llama.cpp-vocab/ggml-vocab-gpt-2.gguf", 4999}}) {
        SCOPED_TRACE(c.file);
        const std::string source = test::sharedPath(c.file);
        const Bytes full = test::readBytes(source);
        auto f = GgufFile::open(source);
        const uint64_t dataStart = std::min<uint64_t>(f->dataOffset(), full.size());
        std::vector<uint64_t> cuts;
        for (uint64_t at = 0; at < dataStart; at += c.headerStep) cuts.push_back(at);
        for (uint64_t at = dataStart; at < full.size(); at += std::max<uint64_t>(1, (full.size() - dataStart) / 200))
            cuts.push_back(at);
        uint64_t lastEnd = 0;
        for (const auto& t : f->tensors()) lastEnd = std::max(lastEnd, f->dataOffset() + t.offset + t.nbytes);
        expectCutsFail(full, cuts, f->tensors().empty() ? full.size() : lastEnd, "cut-real.gguf");
    }
}

// Random byte flips in the header and tensor table: any outcome but a crash is fine.
TEST(GgufCorrupt, RandomHeaderCorruptionNeverCrashes) {
    const Bytes original = test::readBytes(test::sharedPath("models/qwen3-tiny.gguf"));
    auto f = GgufFile::open(test::sharedPath("models/qwen3-tiny.gguf"));
    const uint64_t headerEnd = f->dataOffset();
    std::mt19937_64 rng(12345);
    const std::string path = test::scratchFile("fuzz.gguf");
    int rejected = 0;
    for (int iter = 0; iter < 400; ++iter) {
        Bytes b(original.begin(), original.begin() + static_cast<ptrdiff_t>(headerEnd + 4096));
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) b[rng() % headerEnd] ^= static_cast<uint8_t>(1u << (rng() % 8));
        test::writeBytes(path, b);
        rejected += !test::openError(path).empty();
    }
    EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace zinc::model
