#include "tools/bench_serve/stream_request.h"

#include <httplib.h>

namespace zinc::tools::bench_serve {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Feeds server-sent events one "data: ..." line at a time.
class EventReader {
public:
    EventReader(StreamOutcome& out, std::chrono::steady_clock::time_point start) : out_(out), start_(start) {}

    void feed(const char* data, size_t size) {
        pending_.append(data, size);
        for (size_t eol; (eol = pending_.find('\n')) != std::string::npos; pending_.erase(0, eol + 1)) {
            std::string line = pending_.substr(0, eol);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.rfind("data: ", 0) == 0) event(line.substr(6));
        }
    }

private:
    void event(const std::string& data) {
        if (data == "[DONE]") {
            out_.done = true;
            return;
        }
        const auto j = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded()) return;
        if (j.contains("error")) {
            out_.errorEvent = j["error"].value("message", std::string("error"));
            return;
        }
        if (j.contains("usage") && j["usage"].is_object()) out_.completionTokens = j["usage"].value("completion_tokens", 0);
        if (!j.contains("choices") || j["choices"].empty()) return;
        const std::string text = j["choices"][0].value("text", std::string());
        if (!text.empty() && out_.firstTextSeconds < 0) out_.firstTextSeconds = secondsSince(start_);
        out_.text += text;
    }

    StreamOutcome& out_;
    std::chrono::steady_clock::time_point start_;
    std::string pending_;
};

}  // namespace

StreamOutcome streamCompletion(const std::string& host, int port, const nlohmann::json& request,
                               std::chrono::seconds timeout) {
    StreamOutcome out;
    httplib::Client client(host, port);
    client.set_read_timeout(timeout);
    client.set_connection_timeout(std::chrono::seconds(10));
    client.set_tcp_nodelay(true);
    const auto start = std::chrono::steady_clock::now();
    EventReader reader(out, start);
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.body = request.dump();
    req.set_header("Content-Type", "application/json");
    req.response_handler = [&](const httplib::Response& res) {
        out.status = res.status;
        return true;
    };
    req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
        if (out.status == 200) reader.feed(data, size);
        else out.body.append(data, size);
        return true;
    };
    const auto result = client.send(req);
    out.totalSeconds = secondsSince(start);
    if (!result) out.transportError = httplib::to_string(result.error());
    out.cut = out.status == 200 && !out.done && out.errorEvent.empty();
    return out;
}

}  // namespace zinc::tools::bench_serve
