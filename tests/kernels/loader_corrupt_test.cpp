// Corrupt code objects: every damaged file is refused with an error that says what and
// where — never a crash, a hang or a huge allocation.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kernels/code_object.h"
#include "kernels/embedded.h"
#include "kernels/msgpack.h"

namespace zinc::kernels::test {
namespace {

std::vector<uint8_t> original() {
    const auto b = embeddedCodeObject("gfx1100");
    return {b.begin(), b.end()};
}

template <typename T>
T get(const std::vector<uint8_t>& b, size_t off) {
    T v;
    std::memcpy(&v, b.data() + off, sizeof(T));
    return v;
}
template <typename T>
void put(std::vector<uint8_t>& b, size_t off, T v) {
    std::memcpy(b.data() + off, &v, sizeof(T));
}

// Offset of section header i, and the first section header of a type.
size_t sectionHeader(const std::vector<uint8_t>& b, uint32_t i) { return get<uint64_t>(b, 40) + 64 * i; }
size_t sectionOfType(const std::vector<uint8_t>& b, uint32_t type) {
    for (uint32_t i = 0; i < get<uint16_t>(b, 60); ++i)
        if (get<uint32_t>(b, sectionHeader(b, i) + 4) == type) return sectionHeader(b, i);
    ADD_FAILURE() << "no section of type " << type;
    return 0;
}

std::string errorOf(const std::vector<uint8_t>& b) {
    try {
        CodeObject::parse(b, "corrupt.hsaco");
    } catch (const CodeObjectError& e) {
        return e.what();
    }
    return "(parsed)";
}

#define EXPECT_ERROR_HAS(bytes, text)                                              \
    do {                                                                           \
        const std::string e_ = errorOf(bytes);                                     \
        EXPECT_NE(e_.find(text), std::string::npos) << "error was: " << e_;        \
        EXPECT_NE(e_.find("corrupt.hsaco"), std::string::npos) << "names the file"; \
    } while (0)

TEST(CodeObjectLoader, ParsesTheOriginal) { EXPECT_EQ(errorOf(original()), "(parsed)"); }

TEST(CodeObjectLoader, RejectsTruncatedFiles) {
    const auto b = original();
    for (size_t size : {size_t{0}, size_t{4}, size_t{63}}) EXPECT_ERROR_HAS(std::vector<uint8_t>(b.begin(), b.begin() + size), "truncated");
    for (size_t size : {size_t{64}, size_t{200}, b.size() / 2, b.size() - 1})
        EXPECT_ERROR_HAS(std::vector<uint8_t>(b.begin(), b.begin() + size), "past the end");
}

TEST(CodeObjectLoader, RejectsBadHeaders) {
    auto b = original();
    b[0] = 0x7e;
    EXPECT_ERROR_HAS(b, "bad magic");
    b = original();
    b[4] = 1;
    EXPECT_ERROR_HAS(b, "not ELF64");
    b = original();
    put<uint16_t>(b, 18, 62);  // x86-64
    EXPECT_ERROR_HAS(b, "not EM_AMDGPU");
    b = original();
    put<uint64_t>(b, 40, b.size() - 10);
    EXPECT_ERROR_HAS(b, "section header table");
    b = original();
    put<uint64_t>(b, 32, uint64_t{1} << 62);
    EXPECT_ERROR_HAS(b, "program header table");
}

TEST(CodeObjectLoader, RejectsSectionsAndNotesPastTheEnd) {
    auto b = original();
    const size_t text = sectionOfType(b, 1);  // PROGBITS
    put<uint64_t>(b, text + 24, b.size() + 4096);
    EXPECT_ERROR_HAS(b, "runs past the end of the file");

    b = original();
    const size_t note = sectionOfType(b, 7);
    const uint64_t noteOff = get<uint64_t>(b, note + 24);
    put<uint32_t>(b, noteOff + 4, 0x7fffffff);  // descsz of the first note
    EXPECT_ERROR_HAS(b, "runs past its section's end");

    b = original();
    put<uint32_t>(b, noteOff, 0xfffffff0u);  // namesz
    EXPECT_ERROR_HAS(b, "note at offset");
}

TEST(CodeObjectLoader, RejectsCorruptMetadata) {
    auto b = original();
    const uint64_t noteOff = get<uint64_t>(b, sectionOfType(b, 7) + 24);
    const uint32_t namesz = get<uint32_t>(b, noteOff);
    const size_t desc = noteOff + 12 + ((namesz + 3) & ~3u);
    b[desc] = 0xc1;  // a type byte msgpack never uses
    EXPECT_ERROR_HAS(b, "NT_AMDGPU_METADATA");
    b = original();
    b[desc] = 0xdf;  // map32 claiming 0xffffffff entries
    std::memset(b.data() + desc + 1, 0xff, 4);
    EXPECT_ERROR_HAS(b, "larger than the data left");
}

TEST(CodeObjectLoader, RejectsBadSymbols) {
    auto b = original();
    const size_t symtab = sectionOfType(b, 2);
    const uint64_t first = get<uint64_t>(b, symtab + 24);
    const uint64_t count = get<uint64_t>(b, symtab + 32) / 24;
    put<uint32_t>(b, first + 24, 0x7fffffff);  // name offset of symbol 1
    EXPECT_ERROR_HAS(b, "name offset");
    b = original();
    for (uint64_t i = 1; i < count; ++i) put<uint64_t>(b, first + 24 * i + 16, 32);  // every size 32
    EXPECT_ERROR_HAS(b, "not 64");
    b = original();
    for (uint64_t i = 1; i < count; ++i) put<uint64_t>(b, first + 24 * i + 8, uint64_t{1} << 40);  // values far away
    EXPECT_ERROR_HAS(b, "outside its section");
}

// Random damage: parse either succeeds or throws CodeObjectError; nothing else.
TEST(CodeObjectLoader, SurvivesRandomDamage) {
    const auto clean = original();
    std::mt19937 rng(99);
    int refused = 0;
    for (int iter = 0; iter < 1500; ++iter) {
        auto b = clean;
        const int flips = 1 + static_cast<int>(rng() % 8);
        for (int f = 0; f < flips; ++f) {
            // Half the damage goes to the headers and metadata (the first few KiB).
            const size_t span = (rng() & 1) ? std::min<size_t>(b.size(), 4096) : b.size();
            b[rng() % span] = static_cast<uint8_t>(rng());
        }
        if (iter % 10 == 0) b.resize(rng() % b.size());
        try {
            CodeObject::parse(b, "fuzz");
        } catch (const CodeObjectError&) {
            ++refused;
        } catch (const std::exception& e) {
            FAIL() << "iteration " << iter << " threw a non-loader error: " << e.what();
        }
    }
    EXPECT_GT(refused, 100);
}

TEST(Msgpack, ReadsScalarsStringsAndContainers) {
    const std::vector<uint8_t> bytes = {0x83,                                      // map of 3
                                        0xa1, 'a', 0x2a,                           // "a": 42
                                        0xa1, 'b', 0x92, 0xd0, 0x80, 0xcd, 0x01, 0x00,  // "b": [-128, 256]
                                        0xa1, 'c', 0xc3};                          // "c": true
    const MsgValue v = parseMsgpack(bytes);
    ASSERT_EQ(v.kind, MsgValue::Kind::Map);
    EXPECT_EQ(v.size(), 3u);
    EXPECT_EQ(v.find("a")->asUnsigned(), 42u);
    EXPECT_EQ(v.find("b")->items[0].integer, -128);
    EXPECT_EQ(v.find("b")->items[1].asUnsigned(), 256u);
    EXPECT_FALSE(v.find("b")->items[0].asUnsigned().has_value());
    EXPECT_TRUE(v.find("c")->boolean);
    EXPECT_EQ(v.find("d"), nullptr);
}

TEST(Msgpack, RejectsTruncationDepthAndTrailingBytes) {
    EXPECT_THROW(parseMsgpack(std::vector<uint8_t>{0xa5, 'a', 'b'}), MsgpackError);  // string past the end
    EXPECT_THROW(parseMsgpack(std::vector<uint8_t>{0xcd, 0x01}), MsgpackError);      // uint16 cut short
    EXPECT_THROW(parseMsgpack(std::vector<uint8_t>{0x01, 0x02}), MsgpackError);      // trailing byte
    EXPECT_THROW(parseMsgpack(std::vector<uint8_t>{0xdd, 0xff, 0xff, 0xff, 0xff}), MsgpackError);
    std::vector<uint8_t> deep(40, 0x91);  // 40 nested one-element arrays
    deep.push_back(0x00);
    try {
        parseMsgpack(deep);
        FAIL() << "accepted 40 levels";
    } catch (const MsgpackError& e) {
        EXPECT_NE(std::string(e.what()).find("nesting"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("at byte"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace zinc::kernels::test
