#pragma once
// Fills a GgufFile from its mapped bytes, validating each field before it is used. Internal to
// model/gguf: users call GgufFile::open.
#include <cstdint>
#include <string_view>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_reader.h"

namespace zinc::model {

class GgufParser {
public:
    static void parse(GgufFile& file);

private:
    explicit GgufParser(GgufFile& file);
    void parseHeader(uint64_t& nTensors, uint64_t& nKv);
    void checkCount(uint64_t count, uint64_t minBytesEach, std::string_view what);
    void parseMetadata(uint64_t nKv);
    GgufValue readValue(uint32_t typeNumber, std::string_view key);
    GgufArray readArray(std::string_view key);
    template <class T>
    std::vector<T> readScalarArray(uint64_t n, std::string_view key);
    void applyAlignment();
    void parseTensorInfos(uint64_t nTensors);
    GgufTensorInfo readTensorInfo(uint64_t index);
    void checkTensorShape(GgufTensorInfo& info, uint32_t typeNumber);
    void placeTensorData();
    void checkNoOverlap();
    [[noreturn]] void failTensor(const GgufTensorInfo& info, const std::string& problem) const;

    GgufFile& file_;
    GgufByteReader in_;
};

}  // namespace zinc::model
