#pragma once
// A GGUF file (v2 or v3) opened over mmap and validated before use. Layout per the GGUF
// specification (ggml/docs/gguf.md, MIT): header, metadata key/value pairs, tensor infos,
// padding to `general.alignment`, tensor data. Every problem is reported as a GgufError
// whose message starts with the file path and names the key, tensor or offset involved.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/gguf/ggml_type.h"
#include "model/model_error.h"

namespace zinc::model {

class GgufError : public ModelError {
public:
    using ModelError::ModelError;
};

// GGUF metadata value types (gguf_type in the spec).
enum class GgufValueType : uint32_t {
    UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
std::string_view ggufValueTypeName(GgufValueType type);

// One metadata value. Scalars keep their own C++ type; arrays are stored typed (no nesting
// of arrays of arrays is needed by any model file; those are rejected with a clear error).
struct GgufArray {
    GgufValueType elemType;
    std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>,
                 std::vector<int16_t>, std::vector<uint32_t>, std::vector<int32_t>,
                 std::vector<float>, std::vector<bool>, std::vector<std::string>,
                 std::vector<uint64_t>, std::vector<int64_t>, std::vector<double>>
        values;
    size_t size() const;
};
struct GgufValue {
    GgufValueType type;
    std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                 std::string, GgufArray, uint64_t, int64_t, double>
        value;
};

struct GgufTensorInfo {
    std::string name;
    GgmlType type;
    uint32_t nDims;
    std::array<uint64_t, 4> ne;  // ggml order: ne[0] is the contiguous (row) dimension
    uint64_t offset;             // relative to the start of the data section
    uint64_t nbytes;
    const uint8_t* data;         // inside the mapping
    uint64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
public:
    // Opens, maps and validates; throws GgufError naming the file and the problem.
    static std::unique_ptr<GgufFile> open(const std::string& path);
    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t dataOffset() const { return dataOffset_; }
    uint64_t fileSize() const { return size_; }

    // Metadata in file order.
    const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
    const GgufValue* find(std::string_view key) const;
    bool has(std::string_view key) const { return find(key) != nullptr; }

    // Typed getters. The required forms throw GgufError "FILE: missing required key KEY" or
    // "... key KEY has type T, expected ..."; integer getters accept any integer type whose
    // value fits.
    std::string getString(std::string_view key) const;
    std::optional<std::string> findString(std::string_view key) const;
    uint64_t getU64(std::string_view key) const;
    std::optional<uint64_t> findU64(std::string_view key) const;
    uint32_t getU32(std::string_view key) const;
    std::optional<uint32_t> findU32(std::string_view key) const;
    float getF32(std::string_view key) const;      // accepts FLOAT32 and FLOAT64
    std::optional<float> findF32(std::string_view key) const;
    std::optional<bool> findBool(std::string_view key) const;
    // Arrays: throw when present with the wrong element type; empty optional when absent.
    std::optional<std::vector<std::string>> findStringArray(std::string_view key) const;
    std::optional<std::vector<float>> findF32Array(std::string_view key) const;
    std::optional<std::vector<int32_t>> findI32Array(std::string_view key) const;  // any int type

    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    const GgufTensorInfo* findTensor(std::string_view name) const;
    // Throws "FILE: missing tensor NAME".
    const GgufTensorInfo& tensor(std::string_view name) const;

private:
    GgufFile() = default;
    std::string path_;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t dataOffset_ = 0;
    uint64_t size_ = 0;
    const uint8_t* map_ = nullptr;
    std::vector<std::pair<std::string, GgufValue>> metadata_;
    std::map<std::string, size_t, std::less<>> metaIndex_;
    std::vector<GgufTensorInfo> tensors_;
    std::map<std::string, size_t, std::less<>> tensorIndex_;
    friend class GgufParser;
};

}  // namespace zinc::model
