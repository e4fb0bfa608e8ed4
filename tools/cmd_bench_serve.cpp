// `zinc-rt bench-serve`: drives a running `zinc-rt serve` on this machine with N concurrent
// streaming clients for a fixed count of requests, and reports as JSON: requests/s, time to
// first text p50/p99, aggregate and per-stream generated tokens/s, statuses (429s), streams
// that ended in an error event or were cut, and the server's RSS before and after (its
// /metrics; after --warmup requests, if any). --outputs writes each request's text, for comparing runs (tests/serve).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <httplib.h>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "tools/bench_serve/stream_request.h"
#include "tools/cli_common.h"

namespace zinc::tools {
namespace {

using bench_serve::StreamOutcome;

struct BenchServeOptions {
    std::string url = "http://127.0.0.1:8080";
    int32_t clients = 8;
    int32_t requests = 0;  // 0: 4 per client
    int32_t maxTokens = 32;
    std::string prompt = "Once upon a time";
    uint64_t seed = 1;
    float temperature = 0.8f;
    std::string model;
    std::string outputs;
    int32_t timeoutSeconds = 300;
    int32_t warmup = 0;  // requests run first at the same concurrency, not counted (RSS "before" is taken after them)
};

struct Endpoint {
    std::string host;
    int port = 0;
};

// Loopback only: this is a load generator, not something to point at other people's servers.
Endpoint parseLoopbackUrl(const std::string& url) {
    static const std::regex form(R"(^http://(127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})/?$)");
    std::smatch m;
    if (!std::regex_match(url, m, form))
        throw std::runtime_error(fmt::format("bench-serve: '{}' is not a loopback URL (http://127.0.0.1:PORT, "
                                             "http://localhost:PORT or http://[::1]:PORT)", url));
    std::string host = m[1].str();
    if (host == "[::1]") host = "::1";
    return {host, std::stoi(m[2].str())};
}

// The server's resident memory from its /metrics (process_resident_memory_bytes); 0: unknown.
double serverRss(const Endpoint& e) {
    httplib::Client client(e.host, e.port);
    client.set_read_timeout(std::chrono::seconds(10));
    const auto res = client.Get("/metrics");
    if (!res || res->status != 200) return 0;
    static const std::regex line(R"((?:^|\n)process_resident_memory_bytes ([0-9.e+]+))");
    std::smatch m;
    return std::regex_search(res->body, m, line) ? std::stod(m[1].str()) : 0;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

nlohmann::json requestBody(const BenchServeOptions& o, int32_t index) {
    nlohmann::json body = {{"prompt", fmt::format("{} #{}", o.prompt, index % 8)},
                           {"max_tokens", o.maxTokens},
                           {"stream", true},
                           {"stream_options", {{"include_usage", true}}},
                           {"seed", o.seed + static_cast<uint64_t>(index)},
                           {"temperature", o.temperature}};
    if (!o.model.empty()) body["model"] = o.model;
    return body;
}

nlohmann::json report(const BenchServeOptions& o, const std::vector<StreamOutcome>& outcomes, double wall, double rssBefore,
                      double rssAfter) {
    std::map<std::string, int32_t> statuses;
    std::vector<double> ttft, perStream;
    int64_t tokens = 0, decodeTokens = 0;
    // The decode window: from the first text of any stream to the end of the last one.
    double firstText = 1e300, lastEnd = 0;
    int32_t ok = 0, errorEvents = 0, cut = 0;
    for (const StreamOutcome& r : outcomes) {
        ++statuses[std::to_string(r.status)];
        if (r.status != 200) continue;
        ok += r.done && r.errorEvent.empty() ? 1 : 0;
        errorEvents += r.errorEvent.empty() ? 0 : 1;
        cut += r.cut ? 1 : 0;
        tokens += r.completionTokens;
        if (r.firstTextSeconds >= 0) {
            ttft.push_back(r.firstTextSeconds);
            const double generating = r.totalSeconds - r.firstTextSeconds;
            if (r.completionTokens > 1 && generating > 0) perStream.push_back((r.completionTokens - 1) / generating);
            decodeTokens += std::max(r.completionTokens - 1, 0);
            firstText = std::min(firstText, r.sentSeconds + r.firstTextSeconds);
            lastEnd = std::max(lastEnd, r.sentSeconds + r.totalSeconds);
        }
    }
    const double decodeWindow = lastEnd - firstText;
    double perStreamMean = 0;
    for (double v : perStream) perStreamMean += v / static_cast<double>(perStream.size());
    return {{"url", o.url},
            {"clients", o.clients},
            {"requests", outcomes.size()},
            {"max_tokens", o.maxTokens},
            {"ok", ok},
            {"statuses", statuses},
            {"rejected_429", statuses.count("429") ? statuses["429"] : 0},
            {"error_events", errorEvents},
            {"cut_streams", cut},
            {"wall_seconds", wall},
            {"requests_per_second", wall > 0 ? static_cast<double>(outcomes.size()) / wall : 0},
            {"ttft_seconds", {{"p50", percentile(ttft, 0.5)}, {"p99", percentile(ttft, 0.99)}}},
            {"generated_tokens", tokens},
            {"aggregate_tokens_per_second", wall > 0 ? static_cast<double>(tokens) / wall : 0},
            // Tokens after each stream's first, over the decode window: the figure to compare
            // between N parallel streams and one (prefill and the first token's wait left out).
            {"aggregate_decode_tokens_per_second", decodeWindow > 0 ? static_cast<double>(decodeTokens) / decodeWindow : 0},
            {"per_stream_tokens_per_second", {{"mean", perStreamMean}, {"p50", percentile(perStream, 0.5)}}},
            {"rss_before_bytes", rssBefore},
            {"rss_after_bytes", rssAfter},
            {"rss_growth", rssBefore > 0 ? rssAfter / rssBefore - 1 : 0}};
}

// Requests first..first+count-1 from `clients` threads; returns the wall seconds.
double drive(const BenchServeOptions& o, const Endpoint& e, int32_t first, std::vector<StreamOutcome>& outcomes) {
    const auto total = static_cast<int32_t>(outcomes.size());
    std::atomic<int32_t> next{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> clients;
    for (int32_t c = 0; c < std::min(o.clients, total); ++c)
        clients.emplace_back([&] {
            for (int32_t i; (i = next++) < total;) {
                const double sent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                StreamOutcome& r = outcomes[static_cast<size_t>(i)];
                r = bench_serve::streamCompletion(e.host, e.port, requestBody(o, first + i), std::chrono::seconds(o.timeoutSeconds));
                r.sentSeconds = sent;
            }
        });
    for (auto& t : clients) t.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void runBenchServe(const BenchServeOptions& o) {
    const Endpoint e = parseLoopbackUrl(o.url);
    const int32_t total = o.requests > 0 ? o.requests : 4 * o.clients;
    const double rssCold = serverRss(e);
    if (o.warmup > 0) {
        std::vector<StreamOutcome> warm(static_cast<size_t>(o.warmup));
        drive(o, e, total, warm);
    }
    const double rssBefore = serverRss(e);
    std::vector<StreamOutcome> outcomes(static_cast<size_t>(total));
    const double wall = drive(o, e, 0, outcomes);
    const double rssAfter = serverRss(e);
    if (!o.outputs.empty()) {
        std::ofstream out(o.outputs);
        for (int32_t i = 0; i < total; ++i) {
            const StreamOutcome& r = outcomes[static_cast<size_t>(i)];
            out << nlohmann::json{{"index", i}, {"status", r.status}, {"text", r.text}, {"tokens", r.completionTokens},
                                  {"done", r.done}, {"error", r.errorEvent}, {"cut", r.cut}, {"transport", r.transportError}}
                       .dump()
                << "\n";
        }
        if (!out) throw std::runtime_error(fmt::format("bench-serve: cannot write {}", o.outputs));
    }
    nlohmann::json figures = report(o, outcomes, wall, rssBefore, rssAfter);
    if (o.warmup > 0) {
        figures["warmup_requests"] = o.warmup;
        figures["rss_cold_bytes"] = rssCold;  // before the warm-up
    }
    std::cout << figures.dump(2) << "\n";
}

}  // namespace

void addBenchServeCommand(CLI::App& app, const GlobalOptions&) {
    auto o = std::make_shared<BenchServeOptions>();
    auto* cmd = app.add_subcommand("bench-serve", "load a running `zinc-rt serve` on this machine: N streaming clients, JSON figures");
    cmd->add_option("--url", o->url, "the server (loopback only)")->capture_default_str();
    cmd->add_option("--clients", o->clients, "concurrent streaming clients")->capture_default_str()->check(CLI::Range(1, 1024));
    cmd->add_option("--requests", o->requests, "requests in all (default: 4 per client)")->check(CLI::Range(1, 1000000));
    cmd->add_option("--max-tokens", o->maxTokens, "max_tokens of each request")->capture_default_str()->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--prompt", o->prompt, "prompt text; request i sends it with ' #' and i mod 8 appended")->capture_default_str();
    cmd->add_option("--seed", o->seed, "request i samples with seed + i")->capture_default_str();
    cmd->add_option("--temperature", o->temperature, "sampling temperature")->capture_default_str();
    cmd->add_option("--model", o->model, "the \"model\" field (default: none, the server's model)");
    cmd->add_option("--outputs", o->outputs, "write each request's outcome and text as a JSON line");
    cmd->add_option("--warmup", o->warmup, "requests run first (same clients, not counted); the RSS before is read after them")
        ->capture_default_str()->check(CLI::Range(0, 1000000));
    cmd->add_option("--timeout", o->timeoutSeconds, "seconds a request may take")->capture_default_str()->check(CLI::Range(1, 86400));
    cmd->callback([o] { runBenchServe(*o); });
}

}  // namespace zinc::tools
