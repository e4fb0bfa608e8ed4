// `zinc-rt trace`: a prompt, warm-up tokens, then N greedy decode tokens with the tier's event log on; writes
// a Chrome/Perfetto trace JSON, optionally the per-token timeline and the per-layer bar chart as
// SVG, and prints a summary (time per op kind and per layer, host against device time per
// token, submissions per token, idle between tokens).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "runtime/events.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tools/cli_common.h"
#include "tools/prompt_tokens.h"
#include "tools/trace/chrome_trace.h"
#include "tools/trace/summary.h"
#include "tools/trace/svg.h"
#include "tools/trace/timeline.h"

namespace zinc::tools {
namespace {

struct TraceOptions {
    std::string model;
    std::string prompt = "Once upon a time";
    std::string tokens;
    int32_t decodeTokens = 16;
    int32_t warmup = 1;
    std::string out = "trace.json";
    std::string svg;
    std::string svgLayers;
};

void writeFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

// Unsets the log however the traced run ends (the tier must not keep a dangling pointer).
class LogScope {
public:
    LogScope(runtime::Tier& tier, runtime::EventLog& log) : tier_(tier) { tier_.setEventLog(&log); }
    ~LogScope() {
        try {
            tier_.setEventLog(nullptr);
        } catch (...) {
        }
    }
    LogScope(const LogScope&) = delete;
    LogScope& operator=(const LogScope&) = delete;

private:
    runtime::Tier& tier_;
};

void runTrace(const TraceOptions& o, const GlobalOptions& global) {
    auto engine = openEngine(o.model, global);
    const auto& config = engine->model->config();
    const auto prompt = promptTokens(*engine->model, o.prompt, o.tokens);
    runtime::EventLog log;
    std::vector<int32_t> generated;
    {
        LogScope scope(*engine->tier, log);
        runtime::Session session(config, *engine->tier);
        session.feed(prompt);
        int32_t next = runtime::argmax(session.logits());
        // Warm-up tokens pay for first touches (instrumented plan recorded, caches cold); their
        // events and the prompt's are dropped unless there are none.
        for (int32_t i = 0; i < o.warmup; ++i) next = runtime::argmax(session.step(next));
        if (o.warmup > 0) log.clear();
        for (int32_t i = 0; i < o.decodeTokens; ++i) {
            generated.push_back(next);
            next = runtime::argmax(session.step(next));
        }
    }
    if (engine->model->hasTokenizer())
        fmt::print(stderr, "generated: {}\n", engine->model->tokenizer().decode(generated));
    const trace::Timeline timeline = trace::buildTimeline(log, engine->graph);
    const trace::Summary summary = trace::summarize(timeline);
    fmt::print("{}", trace::formatSummary(summary));
    if (!timeline.deviceClockConsistent)
        fmt::print("note: no single offset fits the device clock to every token's host window (clocks drift?)\n");
    const std::string title = fmt::format("zinc-rt trace: {} on {}", std::filesystem::path(o.model).filename().string(), log.tier);
    if (!o.out.empty()) {
        const auto json = trace::chromeTrace(timeline, title);
        writeFile(o.out, json.dump());
        fmt::print("\nwrote {} ({} trace events; open in ui.perfetto.dev or chrome://tracing)\n", o.out, json["traceEvents"].size());
    }
    if (!o.svg.empty()) {
        writeFile(o.svg, trace::tokenTimelineSvg(timeline, title + ": per-token timeline"));
        fmt::print("wrote {}\n", o.svg);
    }
    if (!o.svgLayers.empty()) {
        writeFile(o.svgLayers, trace::layerBarsSvg(summary, title + ": time per layer"));
        fmt::print("wrote {}\n", o.svgLayers);
    }
}

}  // namespace

void addTraceCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<TraceOptions>();
    auto* cmd = app.add_subcommand("trace", "decode with events on: Chrome/Perfetto trace JSON, SVG timeline, summary");
    cmd->add_option("model", o->model, "GGUF model file")->required();
    cmd->add_option("-p,--prompt", o->prompt, "prompt text")->capture_default_str();
    cmd->add_option("--tokens", o->tokens, "prompt as token ids instead (\"1 2 3\")");
    cmd->add_option("-n,--n-predict", o->decodeTokens, "decode tokens to trace")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--warmup", o->warmup, "decode tokens run first and left out of the trace (0: the prompt is traced too)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1 << 16));
    cmd->add_option("--out", o->out, "trace JSON file (empty: none)")->capture_default_str();
    cmd->add_option("--svg", o->svg, "per-token timeline SVG file");
    cmd->add_option("--svg-layers", o->svgLayers, "per-layer bar chart SVG file");
    cmd->callback([o, &global] { runTrace(*o, global); });
}

}  // namespace zinc::tools
