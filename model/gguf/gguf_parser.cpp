#include "model/gguf/gguf_parser.h"

#include <algorithm>
#include <cstdio>

#include "model/gguf/gguf_value.h"

// Layout per the GGUF specification (ggml/docs/gguf.md, MIT):
//   u32 magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv
//   n_kv x { string key | u32 value type | value }
//   n_tensors x { string name | u32 n_dims | u64 ne[n_dims] | u32 ggml type | u64 offset }
//   padding to general.alignment (default 32) | tensor data, each at its aligned offset
// Strings are a u64 byte length and the bytes; arrays are u32 element type, u64 count, elements.
// Version 1 used 32-bit counts and lengths; version 3 only added big-endian files.

namespace zinc::model {
namespace {

constexpr uint64_t kMinKvBytes = 8 + 4 + 1;              // empty key, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, 1 dim
constexpr uint64_t kMaxDims = 4;
constexpr uint64_t kMaxElements = static_cast<uint64_t>(INT64_MAX);

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

std::string shapeString(const GgufTensorInfo& info) {
    std::string s = "[";
    for (uint32_t d = 0; d < info.nDims && d < kMaxDims; ++d) s += (d ? ", " : "") + std::to_string(info.ne[d]);
    return s + "]";
}

}  // namespace

GgufParser::GgufParser(GgufFile& file) : file_(file), in_(file.path_, file.map_, file.size_) {}

void GgufParser::parse(GgufFile& file) {
    GgufParser p(file);
    uint64_t nTensors = 0, nKv = 0;
    p.parseHeader(nTensors, nKv);
    p.parseMetadata(nKv);
    p.applyAlignment();
    p.parseTensorInfos(nTensors);
    p.placeTensorData();
    p.checkNoOverlap();
}

void GgufParser::parseHeader(uint64_t& nTensors, uint64_t& nKv) {
    const auto magic = in_.read<uint32_t>({"the magic"});
    if (std::memcmp(&magic, "GGUF", 4) != 0) {
        std::string seen(reinterpret_cast<const char*>(&magic), 4);
        in_.fail("bad magic " + ggufQuoteString(seen, 4) + " (expected \"GGUF\"); not a GGUF file");
    }
    const auto version = in_.read<uint32_t>({"the version"});
    if (version != 0 && (version & 0xffffu) == 0) {
        in_.fail("big-endian GGUF file (version field reads " + hex32(version) +
                 "); only little-endian files are supported");
    }
    if (version == 1) in_.fail("unsupported GGUF version 1 (only versions 2 and 3 are supported)");
    if (version != 2 && version != 3)
        in_.fail("unsupported GGUF version " + std::to_string(version) + " (only 2 and 3)");
    file_.version_ = version;
    nTensors = in_.read<uint64_t>({"the tensor count"});
    nKv = in_.read<uint64_t>({"the metadata count"});
    checkCount(nKv, kMinKvBytes, "metadata count n_kv");
    checkCount(nTensors, kMinTensorInfoBytes, "tensor count n_tensors");
}

// A count whose smallest possible encoding cannot fit is rejected before anything is
// allocated for it: "absurd" when even the whole file could not hold it, else "truncated".
void GgufParser::checkCount(uint64_t count, uint64_t minBytesEach, std::string_view what) {
    if (count <= in_.remaining() / minBytesEach) return;
    const std::string head = std::string(what) + " = " + std::to_string(count);
    if (count > in_.size() / minBytesEach) {
        in_.fail("absurd " + head + ": each needs at least " + std::to_string(minBytesEach) +
                 " bytes and the whole file is only " + std::to_string(in_.size()) +
                 " bytes (corrupt or truncated file)");
    }
    in_.fail("truncated at offset " + std::to_string(in_.offset()) + ": " + head + " needs at least " +
             std::to_string(count * minBytesEach) + " bytes but only " +
             std::to_string(in_.remaining()) + " are left");
}

void GgufParser::parseMetadata(uint64_t nKv) {
    file_.metadata_.reserve(nKv);
    for (uint64_t i = 0; i < nKv; ++i) {
        std::string key = in_.readString({"key of metadata pair", {}, i});
        if (file_.metaIndex_.count(key)) in_.fail("duplicate key '" + key + "' (metadata pair #" + std::to_string(i) + ")");
        const auto typeNumber = in_.read<uint32_t>({"value type of key", key});
        GgufValue value = readValue(typeNumber, key);
        file_.metaIndex_.emplace(key, file_.metadata_.size());
        file_.metadata_.emplace_back(std::move(key), std::move(value));
    }
}

GgufValue GgufParser::readValue(uint32_t typeNumber, std::string_view key) {
    const ReadContext what{"value of key", key};
    switch (static_cast<GgufValueType>(typeNumber)) {
    case GgufValueType::UINT8: return {GgufValueType::UINT8, in_.read<uint8_t>(what)};
    case GgufValueType::INT8: return {GgufValueType::INT8, in_.read<int8_t>(what)};
    case GgufValueType::UINT16: return {GgufValueType::UINT16, in_.read<uint16_t>(what)};
    case GgufValueType::INT16: return {GgufValueType::INT16, in_.read<int16_t>(what)};
    case GgufValueType::UINT32: return {GgufValueType::UINT32, in_.read<uint32_t>(what)};
    case GgufValueType::INT32: return {GgufValueType::INT32, in_.read<int32_t>(what)};
    case GgufValueType::FLOAT32: return {GgufValueType::FLOAT32, in_.read<float>(what)};
    case GgufValueType::BOOL: return {GgufValueType::BOOL, in_.read<uint8_t>(what) != 0};
    case GgufValueType::STRING: return {GgufValueType::STRING, in_.readString(what)};
    case GgufValueType::ARRAY: return {GgufValueType::ARRAY, readArray(key)};
    case GgufValueType::UINT64: return {GgufValueType::UINT64, in_.read<uint64_t>(what)};
    case GgufValueType::INT64: return {GgufValueType::INT64, in_.read<int64_t>(what)};
    case GgufValueType::FLOAT64: return {GgufValueType::FLOAT64, in_.read<double>(what)};
    }
    in_.fail("key '" + std::string(key) + "' has unknown value type " + std::to_string(typeNumber));
}

template <class T>
std::vector<T> GgufParser::readScalarArray(uint64_t n, std::string_view key) {
    std::vector<T> v(n);
    if constexpr (std::is_same_v<T, bool>) {
        for (uint64_t i = 0; i < n; ++i) v[i] = in_.read<uint8_t>({"element of array", key, i}) != 0;
    } else {
        in_.readBytes(v.data(), n * sizeof(T), {"elements of array", key});
    }
    return v;
}

GgufArray GgufParser::readArray(std::string_view key) {
    const auto elemNumber = in_.read<uint32_t>({"element type of array", key});
    if (elemNumber == static_cast<uint32_t>(GgufValueType::ARRAY))
        in_.fail("key '" + std::string(key) + "' is an array of arrays, which is not supported");
    if (!ggufIsValueType(elemNumber))
        in_.fail("array key '" + std::string(key) + "' has unknown element type " + std::to_string(elemNumber));
    const auto elemType = static_cast<GgufValueType>(elemNumber);
    const uint64_t n = in_.read<uint64_t>({"length of array", key});
    const uint64_t minBytes = ggufScalarSize(elemNumber).value_or(8);  // a string is >= 8 bytes
    checkCount(n, minBytes, "length of array '" + std::string(key) + "' (" +
                                std::string(ggufValueTypeName(elemType)) + ")");
    GgufArray arr{elemType, std::vector<uint8_t>{}};
    switch (elemType) {
    case GgufValueType::UINT8: arr.values = readScalarArray<uint8_t>(n, key); break;
    case GgufValueType::INT8: arr.values = readScalarArray<int8_t>(n, key); break;
    case GgufValueType::UINT16: arr.values = readScalarArray<uint16_t>(n, key); break;
    case GgufValueType::INT16: arr.values = readScalarArray<int16_t>(n, key); break;
    case GgufValueType::UINT32: arr.values = readScalarArray<uint32_t>(n, key); break;
    case GgufValueType::INT32: arr.values = readScalarArray<int32_t>(n, key); break;
    case GgufValueType::FLOAT32: arr.values = readScalarArray<float>(n, key); break;
    case GgufValueType::BOOL: arr.values = readScalarArray<bool>(n, key); break;
    case GgufValueType::UINT64: arr.values = readScalarArray<uint64_t>(n, key); break;
    case GgufValueType::INT64: arr.values = readScalarArray<int64_t>(n, key); break;
    case GgufValueType::FLOAT64: arr.values = readScalarArray<double>(n, key); break;
    case GgufValueType::STRING: {
        std::vector<std::string> strings(n);
        for (uint64_t i = 0; i < n; ++i) strings[i] = in_.readString({"element of array", key, i});
        arr.values = std::move(strings);
        break;
    }
    case GgufValueType::ARRAY: break;  // rejected above
    }
    return arr;
}

void GgufParser::applyAlignment() {
    const GgufValue* v = file_.find("general.alignment");
    if (!v) return;
    const auto n = ggufIntegerOf(*v);
    if (!n) {
        in_.fail("key 'general.alignment' has type " + ggufDescribeType(*v) + ", expected UINT32");
    }
    if (n->negative || n->magnitude == 0 || (n->magnitude & (n->magnitude - 1)) != 0) {
        in_.fail("key 'general.alignment' = " + std::string(n->negative ? "-" : "") +
                 std::to_string(n->magnitude) + " is not a non-zero power of two");
    }
    file_.alignment_ = n->magnitude;
}

void GgufParser::parseTensorInfos(uint64_t nTensors) {
    checkCount(nTensors, kMinTensorInfoBytes, "tensor count n_tensors");
    file_.tensors_.reserve(nTensors);
    for (uint64_t i = 0; i < nTensors; ++i) {
        GgufTensorInfo info = readTensorInfo(i);
        if (file_.tensorIndex_.count(info.name)) in_.fail("duplicate tensor '" + info.name + "' (tensor #" + std::to_string(i) + ")");
        file_.tensorIndex_.emplace(info.name, file_.tensors_.size());
        file_.tensors_.push_back(std::move(info));
    }
}

GgufTensorInfo GgufParser::readTensorInfo(uint64_t index) {
    GgufTensorInfo info{};
    info.name = in_.readString({"name of tensor", {}, index});
    info.nDims = in_.read<uint32_t>({"dimension count of tensor", info.name});
    if (info.nDims == 0 || info.nDims > kMaxDims) {
        failTensor(info, "has n_dims = " + std::to_string(info.nDims) + "; GGUF tensors have 1 to 4 dimensions");
    }
    info.ne = {1, 1, 1, 1};
    for (uint32_t d = 0; d < info.nDims; ++d) info.ne[d] = in_.read<uint64_t>({"shape of tensor", info.name});
    const auto typeNumber = in_.read<uint32_t>({"type of tensor", info.name});
    info.offset = in_.read<uint64_t>({"data offset of tensor", info.name});
    checkTensorShape(info, typeNumber);
    if (info.offset % file_.alignment_ != 0) {
        failTensor(info, "offset " + std::to_string(info.offset) + " is not a multiple of the alignment " +
                             std::to_string(file_.alignment_));
    }
    return info;
}

void GgufParser::checkTensorShape(GgufTensorInfo& info, uint32_t typeNumber) {
    const auto traits = ggmlTypeTraits(typeNumber);
    if (!traits) in_.fail("unknown tensor type " + std::to_string(typeNumber) + " for tensor '" + info.name + "'");
    info.type = traits->type;
    uint64_t elements = 1;
    for (uint32_t d = 0; d < info.nDims; ++d) {
        const std::string dim = "ne[" + std::to_string(d) + "] = " + std::to_string(info.ne[d]);
        if (info.ne[d] == 0) failTensor(info, "has a zero dimension (" + dim + ")");
        if (info.ne[d] > kMaxElements) failTensor(info, "has an absurd dimension (" + dim + ")");
        if (__builtin_mul_overflow(elements, info.ne[d], &elements) || elements > kMaxElements)
            failTensor(info, "element count overflows (shape " + shapeString(info) + ")");
    }
    if (info.ne[0] % traits->blockElems != 0) {
        failTensor(info, "row length ne[0] = " + std::to_string(info.ne[0]) + " is not a multiple of the " +
                             std::string(traits->name) + " block size " + std::to_string(traits->blockElems));
    }
    const uint64_t rowBlocks = info.ne[0] / traits->blockElems;
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(rowBlocks, traits->blockBytes, &nbytes) ||
        __builtin_mul_overflow(nbytes, elements / info.ne[0], &nbytes)) {
        failTensor(info, "size in bytes overflows (shape " + shapeString(info) + ", type " +
                             std::string(traits->name) + ")");
    }
    info.nbytes = nbytes;
}

void GgufParser::placeTensorData() {
    const uint64_t align = file_.alignment_;
    const uint64_t end = in_.offset();
    uint64_t dataOffset = 0;
    if (__builtin_add_overflow(end, align - 1, &dataOffset))
        in_.fail("data section offset overflows with alignment " + std::to_string(align));
    dataOffset -= dataOffset % align;
    file_.dataOffset_ = dataOffset;
    if (file_.tensors_.empty()) return;  // vocab-only files may end right after the metadata
    if (dataOffset > file_.size_) {
        in_.fail("truncated: the tensor data section starts at offset " + std::to_string(dataOffset) +
                 " but the file is only " + std::to_string(file_.size_) + " bytes");
    }
    const uint64_t dataBytes = file_.size_ - dataOffset;
    for (auto& t : file_.tensors_) {
        if (t.offset > dataBytes || t.nbytes > dataBytes - t.offset) {
            failTensor(t, "data at offset " + std::to_string(t.offset) + " (" + std::to_string(t.nbytes) +
                              " bytes, file offset " + std::to_string(dataOffset) + " + " +
                              std::to_string(t.offset) + ") runs past the end of the file (" +
                              std::to_string(file_.size_) + " bytes; truncated?)");
        }
        t.data = file_.map_ + dataOffset + t.offset;
    }
}

void GgufParser::checkNoOverlap() {
    std::vector<const GgufTensorInfo*> byOffset;
    byOffset.reserve(file_.tensors_.size());
    for (const auto& t : file_.tensors_) byOffset.push_back(&t);
    std::sort(byOffset.begin(), byOffset.end(),
              [](const auto* a, const auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < byOffset.size(); ++i) {
        const auto& prev = *byOffset[i - 1];
        const auto& cur = *byOffset[i];
        if (cur.offset < prev.offset + prev.nbytes) {
            in_.fail("tensors '" + prev.name + "' (offset " + std::to_string(prev.offset) + ", " +
                     std::to_string(prev.nbytes) + " bytes) and '" + cur.name + "' (offset " +
                     std::to_string(cur.offset) + ") overlap");
        }
    }
}

void GgufParser::failTensor(const GgufTensorInfo& info, const std::string& problem) const {
    in_.fail("tensor '" + info.name + "' " + problem);
}

}  // namespace zinc::model
