#pragma once
// Streaming GGUF v3 writer for make-model and tests. Usage: add metadata and tensor infos,
// writeHeader(), then writeTensorData() for each tensor in order (in as many chunks as
// convenient), then finish(). Only the header is held in memory, so files of many GB stream
// straight to disk. Not internally synchronised: one thread at a time may call it (a producer
// thread may own it after writeHeader()).
#include <cstdint>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"

namespace zinc::model {

class GgufWriter {
public:
    static constexpr uint64_t kDefaultAlignment = 32;

    // Creates or truncates `path`. An alignment other than 32 must be a power of two and is
    // recorded as the first key, general.alignment (UINT32).
    explicit GgufWriter(std::string path, uint64_t alignment = kDefaultAlignment);
    // Closes the file; a file never finish()ed is removed, so no half-written model survives.
    ~GgufWriter();
    GgufWriter(const GgufWriter&) = delete;
    GgufWriter& operator=(const GgufWriter&) = delete;

    // Metadata in the order added; throws GgufError on a duplicate key or after writeHeader().
    void add(std::string key, GgufValue value);
    void addString(std::string key, std::string value);
    void addBool(std::string key, bool value);
    void addU8(std::string key, uint8_t value);
    void addI8(std::string key, int8_t value);
    void addU16(std::string key, uint16_t value);
    void addI16(std::string key, int16_t value);
    void addU32(std::string key, uint32_t value);
    void addI32(std::string key, int32_t value);
    void addU64(std::string key, uint64_t value);
    void addI64(std::string key, int64_t value);
    void addF32(std::string key, float value);
    void addF64(std::string key, double value);
    void addArray(std::string key, GgufArray array);
    void addStringArray(std::string key, std::vector<std::string> values);
    void addF32Array(std::string key, std::vector<float> values);
    void addI32Array(std::string key, std::vector<int32_t> values);

    // A tensor of `type` with shape ne (ggml order, 1 to 4 dims); returns its index. The byte
    // size follows from type and shape; offsets are assigned in the order tensors are added.
    size_t addTensor(std::string name, GgmlType type, std::span<const uint64_t> ne);
    size_t addTensor(std::string name, GgmlType type, std::initializer_list<uint64_t> ne) {
        return addTensor(std::move(name), type, std::span<const uint64_t>(ne.begin(), ne.size()));
    }
    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }  // data == nullptr

    // Header, metadata, tensor infos and the padding up to the data section.
    void writeHeader();
    // Appends bytes of tensor `index`, which must be the tensor being written (in order). A
    // tensor may come in several chunks; the padding after it is written once it is complete.
    void writeTensorData(size_t index, std::span<const uint8_t> bytes);
    // Checks that every tensor was written in full, flushes and closes.
    void finish();

    const std::string& path() const { return path_; }
    uint64_t dataOffset() const { return dataOffset_; }  // valid after writeHeader()
    uint64_t fileSize() const;                           // final size, valid after writeHeader()
    uint64_t bytesWritten() const { return written_ + buffered_; }

private:
    [[noreturn]] void fail(const std::string& problem) const;
    void requireMetadataPhase(std::string_view what) const;
    std::vector<uint8_t> serializeHeader() const;
    void writeBytes(const uint8_t* data, uint64_t n);
    void writeZeros(uint64_t n);
    void flushBuffer();
    void writeFully(const uint8_t* data, uint64_t n);

    std::string path_;
    uint64_t alignment_;
    int fd_ = -1;
    bool headerWritten_ = false;
    bool finished_ = false;
    std::vector<std::pair<std::string, GgufValue>> metadata_;
    std::set<std::string, std::less<>> keys_;
    std::vector<GgufTensorInfo> tensors_;
    std::set<std::string, std::less<>> tensorNames_;
    uint64_t nextOffset_ = 0;  // data-section offset of the next tensor added
    uint64_t dataOffset_ = 0;
    size_t current_ = 0;           // tensor being written
    uint64_t currentWritten_ = 0;  // its bytes so far
    std::vector<uint8_t> buffer_;
    uint64_t buffered_ = 0;
    uint64_t written_ = 0;
};

}  // namespace zinc::model
