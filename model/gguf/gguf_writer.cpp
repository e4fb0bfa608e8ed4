#include "model/gguf/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "model/gguf/gguf_value.h"

// Writes the layout of the GGUF specification (ggml/docs/gguf.md), version 3, little endian;
// like ggml's gguf writer, every tensor's data is followed by zero padding to the alignment.

namespace zinc::model {
namespace {

constexpr size_t kBufferBytes = 8u << 20;  // large sequential writes
constexpr uint32_t kVersion = 3;

uint64_t alignUp(uint64_t x, uint64_t align) { return (x + align - 1) / align * align; }

// Appends little-endian scalars and GGUF strings to a byte vector.
class ByteSink {
public:
    explicit ByteSink(std::vector<uint8_t>& out) : out_(out) {}
    template <class T>
    void put(T v) {
        append(&v, sizeof(T));
    }
    void putString(const std::string& s) {
        put<uint64_t>(s.size());
        append(s.data(), s.size());
    }
    template <class T>
    void putElements(const std::vector<T>& v) {
        if constexpr (std::is_same_v<T, std::string>) {
            for (const auto& s : v) putString(s);
        } else if constexpr (std::is_same_v<T, bool>) {
            for (bool b : v) put<uint8_t>(b ? 1 : 0);
        } else {
            append(v.data(), v.size() * sizeof(T));
        }
    }
    void putValue(const GgufValue& value) {
        std::visit(
            [&](const auto& v) {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, GgufArray>) {
                    put<uint32_t>(static_cast<uint32_t>(v.elemType));
                    put<uint64_t>(v.size());
                    std::visit([&](const auto& vec) { putElements(vec); }, v.values);
                } else if constexpr (std::is_same_v<T, std::string>) {
                    putString(v);
                } else if constexpr (std::is_same_v<T, bool>) {
                    put<uint8_t>(v ? 1 : 0);
                } else {
                    put<T>(v);
                }
            },
            value.value);
    }

private:
    void append(const void* p, size_t n) {
        if (n == 0) return;
        const size_t at = out_.size();
        out_.resize(at + n);
        std::memcpy(out_.data() + at, p, n);
    }
    std::vector<uint8_t>& out_;
};

// The variant alternative must agree with the declared type, or the file would lie.
bool valueMatchesType(const GgufValue& v) {
    if (const auto* arr = std::get_if<GgufArray>(&v.value)) {
        if (v.type != GgufValueType::ARRAY || arr->elemType == GgufValueType::ARRAY) return false;
        const auto e = static_cast<size_t>(arr->elemType);
        return arr->values.index() == (e < 9 ? e : e - 1);  // the array variant has no ARRAY slot
    }
    return v.value.index() == static_cast<size_t>(v.type);
}

}  // namespace

GgufWriter::GgufWriter(std::string path, uint64_t alignment) : path_(std::move(path)), alignment_(alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > UINT32_MAX)
        fail("alignment " + std::to_string(alignment) + " is not a power of two that fits UINT32");
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(std::string("cannot create: ") + std::strerror(errno));
    if (alignment != kDefaultAlignment) addU32("general.alignment", static_cast<uint32_t>(alignment));
}

GgufWriter::~GgufWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!finished_) ::unlink(path_.c_str());
}

void GgufWriter::fail(const std::string& problem) const { throw GgufError(path_ + ": " + problem); }

void GgufWriter::requireMetadataPhase(std::string_view what) const {
    if (headerWritten_) fail("cannot add " + std::string(what) + " after the header was written");
}

void GgufWriter::add(std::string key, GgufValue value) {
    requireMetadataPhase("key " + key);
    if (!valueMatchesType(value)) fail("key " + key + ": value does not hold its declared type " + ggufDescribeType(value));
    if (!keys_.insert(key).second) fail("duplicate key " + key);
    metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::addString(std::string key, std::string v) { add(std::move(key), {GgufValueType::STRING, std::move(v)}); }
void GgufWriter::addBool(std::string key, bool v) { add(std::move(key), {GgufValueType::BOOL, v}); }
void GgufWriter::addU8(std::string key, uint8_t v) { add(std::move(key), {GgufValueType::UINT8, v}); }
void GgufWriter::addI8(std::string key, int8_t v) { add(std::move(key), {GgufValueType::INT8, v}); }
void GgufWriter::addU16(std::string key, uint16_t v) { add(std::move(key), {GgufValueType::UINT16, v}); }
void GgufWriter::addI16(std::string key, int16_t v) { add(std::move(key), {GgufValueType::INT16, v}); }
void GgufWriter::addU32(std::string key, uint32_t v) { add(std::move(key), {GgufValueType::UINT32, v}); }
void GgufWriter::addI32(std::string key, int32_t v) { add(std::move(key), {GgufValueType::INT32, v}); }
void GgufWriter::addU64(std::string key, uint64_t v) { add(std::move(key), {GgufValueType::UINT64, v}); }
void GgufWriter::addI64(std::string key, int64_t v) { add(std::move(key), {GgufValueType::INT64, v}); }
void GgufWriter::addF32(std::string key, float v) { add(std::move(key), {GgufValueType::FLOAT32, v}); }
void GgufWriter::addF64(std::string key, double v) { add(std::move(key), {GgufValueType::FLOAT64, v}); }
void GgufWriter::addArray(std::string key, GgufArray a) { add(std::move(key), {GgufValueType::ARRAY, std::move(a)}); }
void GgufWriter::addStringArray(std::string key, std::vector<std::string> v) {
    addArray(std::move(key), GgufArray{GgufValueType::STRING, std::move(v)});
}
void GgufWriter::addF32Array(std::string key, std::vector<float> v) {
    addArray(std::move(key), GgufArray{GgufValueType::FLOAT32, std::move(v)});
}
void GgufWriter::addI32Array(std::string key, std::vector<int32_t> v) {
    addArray(std::move(key), GgufArray{GgufValueType::INT32, std::move(v)});
}

size_t GgufWriter::addTensor(std::string name, GgmlType type, std::span<const uint64_t> ne) {
    requireMetadataPhase("tensor " + name);
    if (ne.empty() || ne.size() > 4) fail("tensor " + name + " must have 1 to 4 dimensions");
    const auto& traits = traitsOf(type);
    GgufTensorInfo info{name, type, static_cast<uint32_t>(ne.size()), {1, 1, 1, 1}, 0, 0, nullptr};
    uint64_t elements = 1;
    for (size_t d = 0; d < ne.size(); ++d) {
        info.ne[d] = ne[d];
        if (ne[d] == 0 || __builtin_mul_overflow(elements, ne[d], &elements) || elements > uint64_t(INT64_MAX))
            fail("tensor " + name + ": zero dimension or element count overflow");
    }
    if (ne[0] % traits.blockElems != 0) {
        fail("tensor " + name + ": row length " + std::to_string(ne[0]) + " is not a multiple of the " +
             std::string(traits.name) + " block size " + std::to_string(traits.blockElems));
    }
    uint64_t nbytes = 0, end = 0;
    if (__builtin_mul_overflow(ne[0] / traits.blockElems, uint64_t{traits.blockBytes}, &nbytes) ||
        __builtin_mul_overflow(nbytes, elements / ne[0], &nbytes) ||
        __builtin_add_overflow(nextOffset_, nbytes, &end) || end > UINT64_MAX - alignment_)
        fail("tensor " + name + ": size overflows");
    if (!tensorNames_.insert(name).second) fail("duplicate tensor " + name);
    info.offset = nextOffset_;
    info.nbytes = nbytes;
    nextOffset_ = alignUp(end, alignment_);
    tensors_.push_back(std::move(info));
    return tensors_.size() - 1;
}

std::vector<uint8_t> GgufWriter::serializeHeader() const {
    std::vector<uint8_t> bytes;
    ByteSink sink(bytes);
    sink.put<uint32_t>(0x46554747u);  // "GGUF" read as a little-endian u32
    sink.put<uint32_t>(kVersion);
    sink.put<uint64_t>(tensors_.size());
    sink.put<uint64_t>(metadata_.size());
    for (const auto& [key, value] : metadata_) {
        sink.putString(key);
        sink.put<uint32_t>(static_cast<uint32_t>(value.type));
        sink.putValue(value);
    }
    for (const auto& t : tensors_) {
        sink.putString(t.name);
        sink.put<uint32_t>(t.nDims);
        for (uint32_t d = 0; d < t.nDims; ++d) sink.put<uint64_t>(t.ne[d]);
        sink.put<uint32_t>(static_cast<uint32_t>(t.type));
        sink.put<uint64_t>(t.offset);
    }
    bytes.resize(alignUp(bytes.size(), alignment_), 0);
    return bytes;
}

void GgufWriter::writeHeader() {
    if (headerWritten_) fail("header written twice");
    const auto header = serializeHeader();
    dataOffset_ = header.size();
    headerWritten_ = true;
    buffer_.resize(kBufferBytes);
    writeBytes(header.data(), header.size());
}

uint64_t GgufWriter::fileSize() const { return dataOffset_ + nextOffset_; }

void GgufWriter::writeTensorData(size_t index, std::span<const uint8_t> bytes) {
    if (!headerWritten_) fail("tensor data written before the header");
    if (index != current_ || index >= tensors_.size()) {
        fail("tensor data out of order: got tensor #" + std::to_string(index) + ", expected #" +
             std::to_string(current_));
    }
    const auto& t = tensors_[index];
    if (bytes.size() > t.nbytes - currentWritten_) {
        fail("too many bytes for tensor " + t.name + ": " + std::to_string(currentWritten_ + bytes.size()) +
             " > " + std::to_string(t.nbytes));
    }
    writeBytes(bytes.data(), bytes.size());
    currentWritten_ += bytes.size();
    if (currentWritten_ == t.nbytes) {
        writeZeros(alignUp(t.nbytes, alignment_) - t.nbytes);
        ++current_;
        currentWritten_ = 0;
    }
}

void GgufWriter::finish() {
    if (!headerWritten_) writeHeader();
    if (current_ != tensors_.size()) {
        fail("finished with tensor #" + std::to_string(current_) + " (" + tensors_[current_].name +
             ") not written in full");
    }
    flushBuffer();  // no fsync: the page cache serves readers, and syncing GBs costs minutes
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(std::string("close failed: ") + std::strerror(errno));
    finished_ = true;
}

void GgufWriter::writeBytes(const uint8_t* data, uint64_t n) {
    if (buffered_ + n > buffer_.size()) flushBuffer();
    if (n >= buffer_.size()) {
        writeFully(data, n);  // large chunks bypass the buffer
        return;
    }
    std::memcpy(buffer_.data() + buffered_, data, n);
    buffered_ += n;
}

void GgufWriter::writeZeros(uint64_t n) {
    static constexpr uint8_t kZeros[256] = {};
    while (n > 0) {
        const uint64_t k = std::min<uint64_t>(n, sizeof kZeros);
        writeBytes(kZeros, k);
        n -= k;
    }
}

void GgufWriter::flushBuffer() {
    writeFully(buffer_.data(), buffered_);
    buffered_ = 0;
}

void GgufWriter::writeFully(const uint8_t* data, uint64_t n) {
    while (n > 0) {
        const ssize_t k = ::write(fd_, data, std::min<uint64_t>(n, 1u << 30));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) fail("write failed at offset " + std::to_string(written_) + ": " + std::strerror(errno));
        data += k;
        n -= static_cast<uint64_t>(k);
        written_ += static_cast<uint64_t>(k);
    }
}

}  // namespace zinc::model
