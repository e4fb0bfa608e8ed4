#pragma once
// A bounds-checked little-endian cursor over the bytes of a GGUF file. Every read checks the
// remaining length first, so a hostile or truncated file ends in a GgufError naming the
// offset and the part being read, never in a read past the mapping.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "model/gguf/gguf_file.h"

namespace zinc::model {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader maps little-endian files and assumes a little-endian host");

// What is being read, rendered only when an error is reported: "name of tensor #3",
// "element 7 of array 'tokenizer.ggml.tokens'".
struct ReadContext {
    std::string_view part;      // "key of metadata pair", "value of key", "element"
    std::string_view name = {}; // key or tensor name, may be empty
    uint64_t index = UINT64_MAX;
    std::string describe() const;
};

class GgufByteReader {
public:
    GgufByteReader(const std::string& path, const uint8_t* data, uint64_t size)
        : path_(path), data_(data), size_(size) {}

    uint64_t offset() const { return pos_; }
    uint64_t size() const { return size_; }
    uint64_t remaining() const { return size_ - pos_; }

    template <class T>
    T read(const ReadContext& what) {
        require(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    // Copies n * elemSize bytes into dst; the caller has checked that n * elemSize fits.
    void readBytes(void* dst, uint64_t nbytes, const ReadContext& what);
    // A GGUF string: uint64 length, then that many bytes (no terminator).
    std::string readString(const ReadContext& what);

    [[noreturn]] void fail(const std::string& message) const;

private:
    void require(uint64_t n, const ReadContext& what) const;

    const std::string& path_;
    const uint8_t* data_;
    uint64_t size_;
    uint64_t pos_ = 0;
};

}  // namespace zinc::model
