#pragma once
// Helpers for the GGUF tests: a small model written with GgufWriter, raw byte access to patch
// a written file, and opening a file expecting a GgufError with a given phrase.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "tests/test_paths.h"

namespace zinc::test {

using Bytes = std::vector<uint8_t>;

inline Bytes readBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
}

inline void writeBytes(const std::string& path, const uint8_t* data, size_t n) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
}
inline void writeBytes(const std::string& path, const Bytes& b) { writeBytes(path, b.data(), b.size()); }

inline std::string scratchFile(const std::string& name) { return (scratchDir() / name).string(); }

// Offset of the first occurrence of `text` in the bytes; fails the test when absent.
inline size_t findText(const Bytes& bytes, std::string_view text) {
    const auto it = std::search(bytes.begin(), bytes.end(), text.begin(), text.end());
    EXPECT_NE(it, bytes.end()) << "text not found: " << text;
    return static_cast<size_t>(it - bytes.begin());
}

template <class T>
void poke(Bytes& bytes, size_t at, T value) {
    ASSERT_LE(at + sizeof(T), bytes.size());
    std::memcpy(bytes.data() + at, &value, sizeof(T));
}

// The message of the GgufError that opening `path` throws, or "" when it opens.
inline std::string openError(const std::string& path) {
    try {
        model::GgufFile::open(path);
    } catch (const model::GgufError& e) {
        return e.what();
    }
    return {};
}

// Writes the bytes and expects GgufFile::open to fail with a message that starts with the path
// and contains `phrase`.
inline void expectOpenFails(const Bytes& bytes, std::string_view phrase, const std::string& name = "bad.gguf") {
    const std::string path = scratchFile(name);
    writeBytes(path, bytes);
    const std::string msg = openError(path);
    ASSERT_FALSE(msg.empty()) << "expected an error containing: " << phrase;
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(phrase), std::string::npos) << "message: " << msg << "\nexpected phrase: " << phrase;
}

// A small valid model: keys "general.architecture", "key.a" (UINT32 1), "key.b" (UINT32 2),
// "arr.i32" [1, 2, 3], "arr.str" ["x", "yy"]; tensors t0 F32 {8, 2}, t1 Q8_0 {32, 2}, t2 F32 {4}.
inline Bytes smallModelBytes(uint64_t alignment = 32) {
    const std::string path = scratchFile("small.gguf");
    {
        model::GgufWriter w(path, alignment);
        w.addString("general.architecture", "llama");
        w.addU32("key.a", 1);
        w.addU32("key.b", 2);
        w.addI32Array("arr.i32", {1, 2, 3});
        w.addStringArray("arr.str", {"x", "yy"});
        w.addTensor("t0", model::GgmlType::F32, {8, 2});
        w.addTensor("t1", model::GgmlType::Q8_0, {32, 2});
        w.addTensor("t2", model::GgmlType::F32, {4});
        w.writeHeader();
        for (size_t i = 0; i < w.tensors().size(); ++i) {
            Bytes data(w.tensors()[i].nbytes, static_cast<uint8_t>(0x10 + i));
            w.writeTensorData(i, data);
        }
        w.finish();
    }
    return readBytes(path);
}

// Offset of tensor `name`'s info fields (just after its name) in a file's bytes.
inline size_t tensorInfoFields(const Bytes& bytes, std::string_view name) {
    std::string pattern(8, '\0');
    const uint64_t len = name.size();
    std::memcpy(pattern.data(), &len, 8);
    pattern += name;
    return findText(bytes, pattern) + pattern.size();
}

}  // namespace zinc::test
