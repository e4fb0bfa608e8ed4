#pragma once
// Errors the HTTP API answers with, in OpenAI's shape:
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// Thrown by request parsing and the route handlers; the server turns them into the response.
#include <stdexcept>
#include <string>

namespace zinc::serve {

class ApiError : public std::runtime_error {
public:
    ApiError(int status, std::string message, std::string type = "invalid_request_error", std::string param = {},
             std::string code = {})
        : std::runtime_error(std::move(message)),
          status_(status),
          type_(std::move(type)),
          param_(std::move(param)),
          code_(std::move(code)) {}

    int status() const { return status_; }
    const std::string& type() const { return type_; }
    const std::string& param() const { return param_; }  // empty: null
    const std::string& code() const { return code_; }    // empty: null

    // 400 invalid_request_error naming the offending field.
    static ApiError badRequest(std::string message, std::string param = {}, std::string code = {}) {
        return ApiError(400, std::move(message), "invalid_request_error", std::move(param), std::move(code));
    }

private:
    int status_;
    std::string type_;
    std::string param_;
    std::string code_;
};

// The JSON body for an error (a single line).
std::string errorBody(const ApiError& error);

}  // namespace zinc::serve
