#include "model/gguf/gguf_reader.h"

namespace zinc::model {

std::string ReadContext::describe() const {
    std::string out(part);
    if (index != UINT64_MAX) out += " #" + std::to_string(index);
    if (!name.empty()) out += " '" + std::string(name) + "'";
    return out;
}

void GgufByteReader::fail(const std::string& message) const { throw GgufError(path_ + ": " + message); }

void GgufByteReader::require(uint64_t n, const ReadContext& what) const {
    if (n <= remaining()) return;
    fail("truncated at offset " + std::to_string(pos_) + " reading " + what.describe() + " (" +
         std::to_string(n) + " bytes needed, " + std::to_string(remaining()) +
         " left; file is " + std::to_string(size_) + " bytes)");
}

void GgufByteReader::readBytes(void* dst, uint64_t nbytes, const ReadContext& what) {
    require(nbytes, what);
    if (nbytes) std::memcpy(dst, data_ + pos_, nbytes);
    pos_ += nbytes;
}

std::string GgufByteReader::readString(const ReadContext& what) {
    const uint64_t start = pos_;
    const auto len = read<uint64_t>(what);  // the length prefix
    if (len > size_) {
        fail("absurd string length " + std::to_string(len) + " at offset " + std::to_string(start) +
             " (" + what.describe() + "): larger than the whole file (" + std::to_string(size_) +
             " bytes; corrupt or truncated file)");
    }
    if (len > remaining()) {
        fail("truncated at offset " + std::to_string(pos_) + ": " + what.describe() +
             " is a string of " + std::to_string(len) + " bytes but only " +
             std::to_string(remaining()) + " bytes are left");
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return s;
}

}  // namespace zinc::model
