#include "model/gguf/gguf_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "model/gguf/gguf_parser.h"
#include "model/gguf/gguf_value.h"

namespace zinc::model {
namespace {

// Closes the descriptor on every path out of open().
struct FdGuard {
    int fd;
    ~FdGuard() {
        if (fd >= 0) ::close(fd);
    }
};

std::string integerText(const GgufInteger& n) {
    return (n.negative ? "-" : "") + std::to_string(n.magnitude);
}

}  // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->path_ = path;
    FdGuard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (fd.fd < 0) throw GgufError(path + ": cannot open: " + std::strerror(errno));
    struct stat st{};
    if (::fstat(fd.fd, &st) != 0) throw GgufError(path + ": cannot stat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw GgufError(path + ": not a regular file");
    file->size_ = static_cast<uint64_t>(st.st_size);
    if (file->size_ > 0) {
        void* map = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd.fd, 0);
        if (map == MAP_FAILED) throw GgufError(path + ": cannot mmap: " + std::strerror(errno));
        file->map_ = static_cast<const uint8_t*>(map);
    }
    try {
        GgufParser::parse(*file);  // on error the unique_ptr unmaps
    } catch (const std::bad_alloc&) {
        // Counts are checked against the file size, but a huge file may still ask for more
        // memory than there is (e.g. an array of a billion empty strings).
        throw GgufError(path + ": out of memory while reading the metadata and tensor table");
    }
    return file;
}

GgufFile::~GgufFile() {
    if (map_) ::munmap(const_cast<uint8_t*>(map_), size_);
}

const GgufValue* GgufFile::find(std::string_view key) const {
    const auto it = metaIndex_.find(key);
    return it == metaIndex_.end() ? nullptr : &metadata_[it->second].second;
}

const GgufTensorInfo* GgufFile::findTensor(std::string_view name) const {
    const auto it = tensorIndex_.find(name);
    return it == tensorIndex_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor(std::string_view name) const {
    if (const auto* t = findTensor(name)) return *t;
    throw GgufError(path_ + ": missing tensor " + std::string(name));
}

namespace {

[[noreturn]] void throwMissing(const std::string& path, std::string_view key) {
    throw GgufError(path + ": missing required key " + std::string(key));
}

[[noreturn]] void throwType(const std::string& path, std::string_view key, const GgufValue& v,
                            std::string_view expected) {
    throw GgufError(path + ": key " + std::string(key) + " has type " + ggufDescribeType(v) + ", expected " +
                    std::string(expected));
}

template <class T>
T required(const std::string& path, std::string_view key, std::optional<T> v) {
    if (!v) throwMissing(path, key);
    return std::move(*v);
}

// An integer value of any integer type that must fit [0, max].
std::optional<uint64_t> findUnsigned(const GgufFile& f, std::string_view key, uint64_t max,
                                     std::string_view targetName) {
    const GgufValue* v = f.find(key);
    if (!v) return std::nullopt;
    const auto n = ggufIntegerOf(*v);
    if (!n) throwType(f.path(), key, *v, "an integer type (" + std::string(targetName) + ")");
    if (n->negative || n->magnitude > max) {
        throw GgufError(f.path() + ": key " + std::string(key) + " = " + integerText(*n) + " (" +
                        ggufDescribeType(*v) + ") does not fit " + std::string(targetName));
    }
    return n->magnitude;
}

const GgufArray* findArray(const GgufFile& f, std::string_view key, std::string_view expected) {
    const GgufValue* v = f.find(key);
    if (!v) return nullptr;
    const auto* arr = std::get_if<GgufArray>(&v->value);
    if (!arr) throwType(f.path(), key, *v, expected);
    return arr;
}

}  // namespace

std::optional<std::string> GgufFile::findString(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::nullopt;
    const auto* s = std::get_if<std::string>(&v->value);
    if (!s) throwType(path_, key, *v, "STRING");
    return *s;
}
std::string GgufFile::getString(std::string_view key) const { return required(path_, key, findString(key)); }

std::optional<uint64_t> GgufFile::findU64(std::string_view key) const {
    return findUnsigned(*this, key, std::numeric_limits<uint64_t>::max(), "UINT64");
}
uint64_t GgufFile::getU64(std::string_view key) const { return required(path_, key, findU64(key)); }

std::optional<uint32_t> GgufFile::findU32(std::string_view key) const {
    const auto v = findUnsigned(*this, key, std::numeric_limits<uint32_t>::max(), "UINT32");
    if (!v) return std::nullopt;
    return static_cast<uint32_t>(*v);
}
uint32_t GgufFile::getU32(std::string_view key) const { return required(path_, key, findU32(key)); }

std::optional<float> GgufFile::findF32(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::nullopt;
    if (const auto* f = std::get_if<float>(&v->value)) return *f;
    if (const auto* d = std::get_if<double>(&v->value)) return static_cast<float>(*d);
    throwType(path_, key, *v, "FLOAT32");
}
float GgufFile::getF32(std::string_view key) const { return required(path_, key, findF32(key)); }

std::optional<bool> GgufFile::findBool(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::nullopt;
    if (const auto* b = std::get_if<bool>(&v->value)) return *b;
    throwType(path_, key, *v, "BOOL");
}

std::optional<std::vector<std::string>> GgufFile::findStringArray(std::string_view key) const {
    const auto* arr = findArray(*this, key, "ARRAY[STRING]");
    if (!arr) return std::nullopt;
    const auto* v = std::get_if<std::vector<std::string>>(&arr->values);
    if (!v) throwType(path_, key, *find(key), "ARRAY[STRING]");
    return *v;
}

std::optional<std::vector<float>> GgufFile::findF32Array(std::string_view key) const {
    const auto* arr = findArray(*this, key, "ARRAY[FLOAT32]");
    if (!arr) return std::nullopt;
    if (const auto* v = std::get_if<std::vector<float>>(&arr->values)) return *v;
    if (const auto* d = std::get_if<std::vector<double>>(&arr->values))
        return std::vector<float>(d->begin(), d->end());
    throwType(path_, key, *find(key), "ARRAY[FLOAT32]");
}

std::optional<std::vector<int32_t>> GgufFile::findI32Array(std::string_view key) const {
    const auto* arr = findArray(*this, key, "ARRAY[INT32]");
    if (!arr) return std::nullopt;
    if (!ggufIsIntegerType(arr->elemType)) throwType(path_, key, *find(key), "an array of integers");
    return std::visit(
        [&](const auto& vec) -> std::vector<int32_t> {
            using T = typename std::decay_t<decltype(vec)>::value_type;
            std::vector<int32_t> out;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                out.reserve(vec.size());
                for (size_t i = 0; i < vec.size(); ++i) {
                    if (!std::in_range<int32_t>(vec[i])) {
                        throw GgufError(path_ + ": key " + std::string(key) + " element " + std::to_string(i) +
                                        " = " + std::to_string(vec[i]) + " does not fit INT32");
                    }
                    out.push_back(static_cast<int32_t>(vec[i]));
                }
            }
            return out;
        },
        arr->values);
}

}  // namespace zinc::model
