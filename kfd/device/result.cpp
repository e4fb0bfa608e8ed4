#include "kfd/device/result.h"

#include <cerrno>
#include <cstring>

namespace zinc::kfd {

std::string Error::describe() const {
    std::string text = operation + ": " + message;
    if (errnum != 0) text += " (errno " + std::to_string(errnum) + ": " + std::strerror(errnum) + ")";
    return text;
}

Error errnoError(std::string operation, std::string message) {
    const int saved = errno;  // first, before anything else can clobber it
    return Error{std::move(operation), saved, std::move(message)};
}

Error plainError(std::string operation, std::string message) {
    return Error{std::move(operation), 0, std::move(message)};
}

}  // namespace zinc::kfd
