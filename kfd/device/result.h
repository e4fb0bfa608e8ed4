#pragma once
// The kfd layer's one error style (STYLE.md §6): every failure carries the operation that failed,
// the errno the kernel gave (0 when the failure is ours, not a syscall's) and a message that
// says what was asked and what state explains it. g++ 12 has no std::expected, hence Result<T>.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace zinc::kfd {

struct Error {
    std::string operation;  // "CREATE_QUEUE", "open /dev/kfd", "waitEvents", ...
    int errnum = 0;         // errno from the syscall; 0 when no syscall failed
    std::string message;    // what was asked, and the state that explains the failure

    // "operation: message (errno N: strerror)" — the form every report prints.
    std::string describe() const;
};

// An Error from a failed syscall; reads errno itself so callers cannot lose it.
Error errnoError(std::string operation, std::string message);
Error plainError(std::string operation, std::string message);

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error error) : v_(std::move(error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { assert(ok()); return std::get<0>(v_); }
    const T& value() const& { assert(ok()); return std::get<0>(v_); }
    T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const Error& error() const { assert(!ok()); return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

// Result<void>: success, or the error.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), ok_(false) {}

    bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    const Error& error() const { assert(!ok_); return error_; }

private:
    Error error_;
    bool ok_ = true;
};

using Status = Result<void>;

}  // namespace zinc::kfd
