// GgufWriter output read back through GgufFile: every value type, arrays, tensor data at
// alignments 32 and 64, chunked streaming, and the writer's own misuse errors.
#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "tests/gguf/gguf_test_util.h"

namespace zinc::model {
namespace {

using test::scratchFile;

template <class T>
const T& valueOf(const GgufFile& f, std::string_view key) {
    const GgufValue* v = f.find(key);
    EXPECT_NE(v, nullptr) << key;
    return std::get<T>(v->value);
}

template <class T>
const std::vector<T>& arrayOf(const GgufFile& f, std::string_view key) {
    return std::get<std::vector<T>>(valueOf<GgufArray>(f, key).values);
}

TEST(GgufWriter, RoundTripsEveryValueType) {
    const std::string path = scratchFile("values.gguf");
    {
        GgufWriter w(path);
        w.addU8("u8", 200);
        w.addI8("i8", -100);
        w.addU16("u16", 60000);
        w.addI16("i16", -30000);
        w.addU32("u32", 4000000000u);
        w.addI32("i32", -2000000000);
        w.addF32("f32", 1.5f);
        w.addBool("bool", true);
        w.addString("str", std::string("h\xc3\xa9llo\0x", 8));
        w.addU64("u64", 0xfedcba9876543210ull);
        w.addI64("i64", INT64_MIN);
        w.addF64("f64", -0.1);
        w.addString("empty", "");
        w.addArray("a.u8", {GgufValueType::UINT8, std::vector<uint8_t>{1, 2, 255}});
        w.addArray("a.i8", {GgufValueType::INT8, std::vector<int8_t>{-1, 127}});
        w.addArray("a.u16", {GgufValueType::UINT16, std::vector<uint16_t>{65535}});
        w.addArray("a.i16", {GgufValueType::INT16, std::vector<int16_t>{-5, 5}});
        w.addArray("a.u32", {GgufValueType::UINT32, std::vector<uint32_t>{7, 4294967295u}});
        w.addI32Array("a.i32", {-1, 0, 1});
        w.addF32Array("a.f32", {0.25f, -2.0f});
        w.addArray("a.bool", {GgufValueType::BOOL, std::vector<bool>{true, false, true}});
        w.addStringArray("a.str", {"a", "", "ccc"});
        w.addArray("a.u64", {GgufValueType::UINT64, std::vector<uint64_t>{1ull << 40}});
        w.addArray("a.i64", {GgufValueType::INT64, std::vector<int64_t>{-(1ll << 40)}});
        w.addArray("a.f64", {GgufValueType::FLOAT64, std::vector<double>{3.25}});
        w.addStringArray("a.empty", {});
        w.finish();
    }
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->version(), 3u);
    EXPECT_EQ(f->metadata().size(), 26u);
    EXPECT_EQ(f->metadata()[0].first, "u8");  // file order kept
    EXPECT_EQ(valueOf<uint8_t>(*f, "u8"), 200);
    EXPECT_EQ(valueOf<int8_t>(*f, "i8"), -100);
    EXPECT_EQ(valueOf<uint16_t>(*f, "u16"), 60000);
    EXPECT_EQ(valueOf<int16_t>(*f, "i16"), -30000);
    EXPECT_EQ(f->getU32("u32"), 4000000000u);
    EXPECT_EQ(valueOf<int32_t>(*f, "i32"), -2000000000);
    EXPECT_EQ(f->getF32("f32"), 1.5f);
    EXPECT_EQ(f->findBool("bool"), true);
    EXPECT_EQ(f->getString("str"), std::string("h\xc3\xa9llo\0x", 8));
    EXPECT_EQ(f->getU64("u64"), 0xfedcba9876543210ull);
    EXPECT_EQ(valueOf<int64_t>(*f, "i64"), INT64_MIN);
    EXPECT_FLOAT_EQ(f->getF32("f64"), -0.1f);
    EXPECT_EQ(f->getString("empty"), "");
    EXPECT_EQ(arrayOf<uint8_t>(*f, "a.u8"), (std::vector<uint8_t>{1, 2, 255}));
    EXPECT_EQ(arrayOf<int8_t>(*f, "a.i8"), (std::vector<int8_t>{-1, 127}));
    EXPECT_EQ(arrayOf<uint16_t>(*f, "a.u16"), (std::vector<uint16_t>{65535}));
    EXPECT_EQ(arrayOf<int16_t>(*f, "a.i16"), (std::vector<int16_t>{-5, 5}));
    EXPECT_EQ(arrayOf<uint32_t>(*f, "a.u32"), (std::vector<uint32_t>{7, 4294967295u}));
    EXPECT_EQ(f->findI32Array("a.i32"), (std::vector<int32_t>{-1, 0, 1}));
    EXPECT_EQ(f->findF32Array("a.f32"), (std::vector<float>{0.25f, -2.0f}));
    EXPECT_EQ(arrayOf<bool>(*f, "a.bool"), (std::vector<bool>{true, false, true}));
    EXPECT_EQ(f->findStringArray("a.str"), (std::vector<std::string>{"a", "", "ccc"}));
    EXPECT_EQ(arrayOf<uint64_t>(*f, "a.u64"), (std::vector<uint64_t>{1ull << 40}));
    EXPECT_EQ(arrayOf<int64_t>(*f, "a.i64"), (std::vector<int64_t>{-(1ll << 40)}));
    EXPECT_EQ(f->findF32Array("a.f64"), (std::vector<float>{3.25f}));
    EXPECT_EQ(f->findStringArray("a.empty")->size(), 0u);
}

TEST(GgufWriter, IntegerGettersAcceptAnyIntegerThatFits) {
    const std::string path = scratchFile("ints.gguf");
    {
        GgufWriter w(path);
        w.addU8("small", 7);
        w.addI64("neg", -1);
        w.addU64("big", 1ull << 33);
        w.addArray("u16s", {GgufValueType::UINT16, std::vector<uint16_t>{1, 2}});
        w.addArray("u32s", {GgufValueType::UINT32, std::vector<uint32_t>{1, 0x80000000u}});
        w.finish();
    }
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->getU32("small"), 7u);
    EXPECT_EQ(f->getU64("small"), 7u);
    EXPECT_EQ(f->getU64("big"), 1ull << 33);
    EXPECT_EQ(f->findI32Array("u16s"), (std::vector<int32_t>{1, 2}));
    const auto error = [&](auto&& fn) -> std::string {
        try {
            fn();
        } catch (const GgufError& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_NE(error([&] { f->getU32("big"); }).find("does not fit UINT32"), std::string::npos);
    EXPECT_NE(error([&] { f->getU64("neg"); }).find("key neg = -1 (INT64) does not fit UINT64"), std::string::npos);
    EXPECT_NE(error([&] { f->findI32Array("u32s"); }).find("element 1 = 2147483648 does not fit INT32"),
              std::string::npos);
}

// Tensor bytes are a pattern unique to each tensor and position.
test::Bytes tensorPattern(size_t index, uint64_t nbytes) {
    test::Bytes b(nbytes);
    for (uint64_t i = 0; i < nbytes; ++i) b[i] = static_cast<uint8_t>(index * 31 + i * 7 + (i >> 8));
    return b;
}

void roundTripTensors(uint64_t alignment) {
    const std::string path = scratchFile("tensors" + std::to_string(alignment) + ".gguf");
    struct Spec {
        const char* name;
        GgmlType type;
        std::vector<uint64_t> ne;
    };
    const std::vector<Spec> specs = {
        {"norm", GgmlType::F32, {5}},           {"emb", GgmlType::Q8_0, {64, 3}},
        {"w.k", GgmlType::Q4_K, {256, 2, 1}},   {"exps", GgmlType::Q6_K, {256, 2, 3}},
        {"half", GgmlType::F16, {3, 1, 1, 7}},  {"iq", GgmlType::IQ4_XS, {256, 1}},
    };
    {
        GgufWriter w(path, alignment);
        w.addString("general.architecture", "test");
        for (const auto& s : specs) w.addTensor(s.name, s.type, s.ne);
        w.writeHeader();
        EXPECT_EQ(w.dataOffset() % alignment, 0u);
        for (size_t i = 0; i < specs.size(); ++i) w.writeTensorData(i, tensorPattern(i, w.tensors()[i].nbytes));
        w.finish();
        EXPECT_EQ(std::filesystem::file_size(path), w.fileSize());
    }
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->alignment(), alignment);
    EXPECT_EQ(f->dataOffset() % alignment, 0u);
    ASSERT_EQ(f->tensors().size(), specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        const auto& t = f->tensors()[i];
        SCOPED_TRACE(t.name);
        EXPECT_EQ(t.name, specs[i].name);
        EXPECT_EQ(t.type, specs[i].type);
        EXPECT_EQ(t.nDims, specs[i].ne.size());
        uint64_t elements = 1;
        for (size_t d = 0; d < specs[i].ne.size(); ++d) {
            EXPECT_EQ(t.ne[d], specs[i].ne[d]);
            elements *= specs[i].ne[d];
        }
        EXPECT_EQ(t.elements(), elements);
        EXPECT_EQ(t.nbytes, elements / traitsOf(t.type).blockElems * traitsOf(t.type).blockBytes);
        EXPECT_EQ(t.offset % alignment, 0u);
        EXPECT_EQ(test::Bytes(t.data, t.data + t.nbytes), tensorPattern(i, t.nbytes));
    }
}

TEST(GgufWriter, RoundTripsTensorsAtAlignment32) { roundTripTensors(32); }

TEST(GgufWriter, RoundTripsTensorsAtAlignment64) {
    roundTripTensors(64);
    auto f = GgufFile::open(scratchFile("tensors64.gguf"));
    EXPECT_EQ(f->getU32("general.alignment"), 64u);
}

TEST(GgufWriter, StreamsATensorInChunks) {
    const std::string path = scratchFile("chunks.gguf");
    const auto whole = tensorPattern(3, 1000 * 4);
    {
        GgufWriter w(path);
        w.addTensor("big", GgmlType::F32, {1000});
        w.addTensor("next", GgmlType::F32, {1});
        w.writeHeader();
        for (size_t at = 0; at < whole.size(); at += 999)
            w.writeTensorData(0, std::span(whole).subspan(at, std::min<size_t>(999, whole.size() - at)));
        w.writeTensorData(1, tensorPattern(0, 4));
        w.finish();
    }
    auto f = GgufFile::open(path);
    const auto& big = f->tensor("big");
    EXPECT_EQ(test::Bytes(big.data, big.data + big.nbytes), whole);
    EXPECT_EQ(f->tensor("next").offset, 4000u);  // 4000 is already a multiple of 32
}

TEST(GgufWriter, RejectsMisuse) {
    const std::string path = scratchFile("misuse.gguf");
    GgufWriter w(path);
    w.addU32("k", 1);
    EXPECT_THROW(w.addU32("k", 2), GgufError);
    EXPECT_THROW(w.addTensor("q", GgmlType::Q4_K, {100}), GgufError);  // not a multiple of 256
    EXPECT_THROW(w.addTensor("z", GgmlType::F32, {0}), GgufError);
    EXPECT_THROW(w.add("bad", {GgufValueType::UINT32, std::string("x")}), GgufError);
    w.addTensor("a", GgmlType::F32, {2});
    w.addTensor("b", GgmlType::F32, {2});
    EXPECT_THROW(w.addTensor("a", GgmlType::F32, {2}), GgufError);
    w.writeHeader();
    EXPECT_THROW(w.addU32("late", 1), GgufError);
    const uint8_t eight[8] = {};
    const uint8_t twelve[12] = {};
    EXPECT_THROW(w.writeTensorData(1, eight), GgufError);   // out of order
    EXPECT_THROW(w.writeTensorData(0, twelve), GgufError);  // too many bytes
    w.writeTensorData(0, eight);
    EXPECT_THROW(w.finish(), GgufError);  // tensor b missing
}

TEST(GgufWriter, UnfinishedFileIsRemoved) {
    const std::string path = scratchFile("unfinished.gguf");
    {
        GgufWriter w(path);
        w.addTensor("a", GgmlType::F32, {2});
        w.writeHeader();
    }
    EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace zinc::model
