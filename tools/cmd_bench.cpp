// `zinc-rt bench`: prefill and decode speed as JSON. The prompt is made of seeded random
// token ids (so no tokenizer is needed); decode feeds back the argmax each step.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <set>
#include <tuple>
#include <numeric>
#include <random>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/session.h"
#include "tools/cli_common.h"
#include "tools/models/model_cache.h"
#include "vulkan/kernel_bench.h"

namespace zinc::tools {
namespace {

struct BenchOptions {
    std::string model;
    int32_t promptTokens = 512;
    int32_t genTokens = 128;
    int32_t repetitions = 3;
    uint64_t seed = 1;
    bool gpuGreedy = false;  // decode through Tier::generateGreedy (tokens sampled and queued on the device)
    bool gpuSample = false;  // decode as chat does: the sampler chain on the device, 16 tokens per call
    int32_t sequences = 0;   // > 0: that many sequences decode together (Tier::evaluateRows), greedy on the host
                             // (with gpuGreedy: Tier::evaluateRowsGreedy, the ids picked on the device;
                             // with gpuSample: Tier::evaluateRowsSampled, a seeded chain a sequence)
    bool kernels = false;    // each matvec shape of the decode graph timed alone (vulkan tier)
    std::vector<uint32_t> kernelTokens{1, 8};
    std::vector<std::string> kernelVariants{"v1", "v2"};
};

// What the host did per decoded token in steady state (after a generation's first call): PM4
// tiers count doorbells and syscalls; -1 where the tier does not count them.
struct HostWork {
    int64_t doorbells = 0, syscalls = 0, tokens = 0;
    bool counted = false;
};

double mean(const std::vector<double>& v) {
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Continuous batching's decode without the server: `n` sequences, each its own random prompt
// in its own KV slot (prefilled through evaluateRows, a slot at a time), then steps of one row
// per sequence, each row's argmax fed back: the host's over the logits read back, or with
// --gpu-greedy the ids the tier picks (evaluateRowsGreedy), or with --gpu-sample each sequence's
// own seeded chain (the default sampler settings, seed --seed + the sequence) run by the tier
// (evaluateRowsSampled: on the vulkan tier on the device). Reports the aggregate decode tok/s (n
// rows a step).
void runBenchSequences(const BenchOptions& o, const GlobalOptions& global) {
    GlobalOptions withSlots = global;
    withSlots.sequences = o.sequences;
    auto engine = openEngine(o.model, withSlots);
    runtime::Tier& tier = *engine->tier;
    const auto& c = engine->model->config();
    const int32_t n = o.sequences;
    if (tier.sequenceSlots() < n)
        throw runtime::TierError(fmt::format("{} tier: holds {} sequence slots, --sequences {} needs as many", tier.name(),
                                             tier.sequenceSlots(), n));
    if (o.promptTokens < 1 || o.promptTokens + o.genTokens > tier.contextLength())
        throw CLI::ValidationError("--prompt-tokens", fmt::format("with --sequences: at least 1, and prompt + generated tokens "
                                                                  "within the context ({})", tier.contextLength()));
    std::mt19937 rng(static_cast<uint32_t>(o.seed));
    std::uniform_int_distribution<int32_t> pick(0, std::min(c.nVocab, 32000) - 1);
    const auto vocab = static_cast<size_t>(c.nVocab);
    std::vector<float> logits(vocab * static_cast<size_t>(n));
    std::vector<double> prefill, decode;
    for (int32_t r = 0; r < o.repetitions; ++r) {
        std::vector<int32_t> next(static_cast<size_t>(n));
        auto start = std::chrono::steady_clock::now();
        for (int32_t s = 0; s < n; ++s)
            for (int32_t p = 0; p < o.promptTokens; p += tier.maxBatch()) {
                std::vector<runtime::SequenceRow> rows;
                for (int32_t q = p; q < std::min(o.promptTokens, p + tier.maxBatch()); ++q)
                    rows.push_back({s, q, pick(rng), q + 1 == o.promptTokens});
                tier.evaluateRows(rows, logits);
                if (rows.back().wantLogits) next[static_cast<size_t>(s)] = runtime::argmax(std::span(logits).first(vocab));
            }
        prefill.push_back(double(n) * o.promptTokens / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        std::vector<runtime::Sampler> samplers;
        std::vector<std::vector<int32_t>> histories(static_cast<size_t>(n));
        std::vector<runtime::RowSampler> rowSamplers;
        for (int32_t s = 0; s < n; ++s) samplers.emplace_back(runtime::SamplerParams{.seed = o.seed + static_cast<uint64_t>(s)});
        start = std::chrono::steady_clock::now();
        std::vector<runtime::SequenceRow> rows(static_cast<size_t>(n));
        for (int32_t i = 0; i < o.genTokens; ++i) {
            for (int32_t s = 0; s < n; ++s) rows[static_cast<size_t>(s)] = {s, o.promptTokens + i, next[static_cast<size_t>(s)], true};
            if (o.gpuGreedy) {
                tier.evaluateRowsGreedy(rows, c.nVocab, next);
                continue;
            }
            if (o.gpuSample) {  // the histories hold the generated tokens (the default chain has no penalty)
                rowSamplers.clear();
                for (size_t s = 0; s < static_cast<size_t>(n); ++s) {
                    histories[s].push_back(next[s]);
                    rowSamplers.push_back({&samplers[s], histories[s]});
                }
                tier.evaluateRowsSampled(rows, c.nVocab, rowSamplers, next);
                continue;
            }
            tier.evaluateRows(rows, logits);
            for (size_t s = 0; s < static_cast<size_t>(n); ++s)
                next[s] = runtime::argmax(std::span(logits).subspan(s * vocab, vocab));
        }
        decode.push_back(double(n) * o.genTokens / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        fmt::print(stderr, "rep {}: prefill {:.1f} tok/s, decode {:.1f} tok/s ({} sequences together)\n", r + 1, prefill.back(),
                   decode.back(), n);
    }
    nlohmann::json j;
    j["model"] = o.model;
    j["model_summary"] = c.summary();
    j["tier"] = tier.name();
    j["tier_detail"] = tier.describe();
    j["sequences"] = n;
    j["prompt_tokens"] = o.promptTokens;
    j["gen_tokens"] = o.genTokens;
    j["repetitions"] = o.repetitions;
    j["prefill_tok_s"] = prefill;
    j["decode_tok_s"] = decode;  // every sequence's tokens together
    j["prefill_tok_s_mean"] = mean(prefill);
    j["decode_tok_s_mean"] = mean(decode);
    j["decode_tok_s_best"] = *std::max_element(decode.begin(), decode.end());
    // rows: the logits read back, argmax on the host
    j["decode_mode"] = o.gpuGreedy ? "rows-gpu-greedy" : o.gpuSample ? "rows-gpu-sample" : "rows";
    std::cout << j.dump(2) << std::endl;
}

// --kernels: the vulkan tier's matvec kernels alone, per shape of the decode graph and token
// count, both kernel variants; a table on stderr, JSON on stdout.
void runBenchKernels(const BenchOptions& o, const GlobalOptions& global) {
    if (global.tier != "vulkan")
        throw CLI::ValidationError("--kernels", fmt::format("times the vulkan tier's kernels: needs --tier=vulkan (the tier is {})", global.tier));
    const auto model = model::Model::load(models::resolveModel(o.model));
    const graph::Graph graph = graph::buildDecodeGraph(model->config(), model->weights());
    vulkan::KernelBenchOptions options;
    options.device = global.device;
    options.tokens = o.kernelTokens;
    options.kernels = o.kernelVariants;
    const auto r = vulkan::benchMatVecKernels(graph, options);
    fmt::print(stderr, "{}: copy kernel {:.1f} GB/s (read + written, {} MiB buffers)\n", r.device, r.copyGbps, r.copyBytes >> 20);
    nlohmann::json sync = nlohmann::json::array();
    for (const auto& t : r.sync) {
        if (t.gaveUp != 0)
            fmt::print(stderr, "{:>4} workgroups: empty dispatch + barrier {:.2f} us; grid barrier: not resident ({} waits gave up)\n",
                       t.groups, t.dispatchUs, t.gaveUp);
        else
            fmt::print(stderr, "{:>4} workgroups: empty dispatch + barrier {:.2f} us; grid barrier {:.2f} us\n", t.groups,
                       t.dispatchUs, t.gridBarrierUs);
        sync.push_back({{"workgroups", t.groups}, {"empty_dispatch_us", t.dispatchUs}, {"resident", t.gaveUp == 0},
                        {"grid_barrier_us", t.gaveUp == 0 ? nlohmann::json(t.gridBarrierUs) : nlohmann::json()}});
    }
    fmt::print(stderr, "{:<24} {:<6} {:>7} {:>6} {:>4} {:>3} {:<16} {:>10} {:>10} {:>9} {:>7}\n", "matvec", "type", "rows", "cols",
               "exp", "tok", "kernel", "us/call", "us+barrier", "GB/s", "% copy");
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : r.kernels) {
        fmt::print(stderr, "{:<24} {:<6} {:>7} {:>6} {:>4} {:>3} {:<16} {:>10.2f} {:>10.2f} {:>9.1f} {:>6.1f}%\n", k.label, k.type,
                   k.rows, k.cols, k.experts, k.tokens, k.kernel, k.usPerCall, k.usPerCallBarrier, k.gbps, 100 * k.copyFraction);
        kernels.push_back({{"label", k.label}, {"type", k.type}, {"rows", k.rows}, {"cols", k.cols}, {"pair", k.pair},
                           {"expert_slots_per_token", k.experts}, {"calls_per_step", k.perToken}, {"tokens", k.tokens}, {"kernel", k.kernel}, {"calls", k.calls},
                           {"us_per_call", k.usPerCall}, {"us_per_call_with_barrier", k.usPerCallBarrier},
                           {"weight_bytes", k.weightBytes}, {"weight_gb_s", k.gbps}, {"fraction_of_copy", k.copyFraction}});
    }
    // Per kernel and token count: the decode step's matvecs, each shape times its calls a step,
    // with the barrier a plan puts after each (what the plan's matvecs would cost). A shape a
    // variant does not run (float weights: v1 always) counts with v1's time.
    using ShapeKey = std::tuple<std::string, std::string, uint32_t, uint32_t, uint32_t, uint32_t>;
    std::map<ShapeKey, std::map<std::string, const vulkan::KernelTiming*>> byShape;
    std::set<std::string> names;
    for (const auto& k : r.kernels) {
        byShape[{k.label, k.type, k.rows, k.cols, k.experts, k.tokens}][k.kernel] = &k;
        names.insert(k.kernel);
    }
    std::map<std::pair<std::string, uint32_t>, std::pair<double, double>> steps;  // us, weight bytes
    for (const auto& [shape, timings] : byShape)
        for (const std::string& name : names) {
            const auto it = timings.count(name) ? timings.find(name) : timings.find("v1");
            if (it == timings.end()) continue;
            auto& [us, bytes] = steps[{name, std::get<5>(shape)}];
            us += it->second->usPerCallBarrier * it->second->perToken;
            bytes += it->second->weightBytes * it->second->perToken;
        }
    nlohmann::json stepJson = nlohmann::json::array();
    for (const auto& [key, value] : steps) {
        fmt::print(stderr, "decode step, {} tokens, {}: {:.1f} us of matvecs, {:.1f} GB/s of weights\n", key.second, key.first,
                   value.first, value.second / value.first * 1e-3);
        stepJson.push_back({{"kernel", key.first}, {"tokens", key.second}, {"matvec_us", value.first},
                            {"weight_gb_s", value.second / value.first * 1e-3}});
    }
    nlohmann::json j;
    j["model"] = o.model;
    j["model_summary"] = model->config().summary();
    j["tier"] = "vulkan";
    j["decode_step_matvecs"] = stepJson;
    j["device"] = r.device;
    j["copy_bytes"] = r.copyBytes;
    j["copy_gb_s"] = r.copyGbps;
    j["sync"] = sync;
    j["kernels"] = kernels;
    std::cout << j.dump(2) << std::endl;
}

void runBench(const BenchOptions& o, const GlobalOptions& global) {
    if (o.kernels) return runBenchKernels(o, global);
    if (o.sequences > 0) return runBenchSequences(o, global);
    auto engine = openEngine(o.model, global);
    const auto& c = engine->model->config();
    std::mt19937 rng(static_cast<uint32_t>(o.seed));
    std::uniform_int_distribution<int32_t> pick(0, std::min(c.nVocab, 32000) - 1);
    std::vector<int32_t> prompt(static_cast<size_t>(o.promptTokens));
    for (auto& id : prompt) id = pick(rng);
    runtime::Session session(c, *engine->tier);
    std::vector<double> prefill, decode;
    HostWork steady;
    for (int32_t r = 0; r < o.repetitions; ++r) {
        session.reset();
        session.resetStats();
        if (!prompt.empty()) session.feed(prompt);
        int32_t next = prompt.empty() ? 0 : runtime::argmax(session.logits());
        double decodeRate = 0;
        if (o.gpuSample && o.genTokens > 0) {
            runtime::Sampler sampler(runtime::SamplerParams{.seed = o.seed});
            const auto start = std::chrono::steady_clock::now();
            for (int32_t done = 0; done < o.genTokens;) {
                const int32_t chunk = std::min({16, o.genTokens - done, session.remaining()});
                if (chunk <= 0) break;
                const runtime::TierStats before = engine->tier->stats();
                next = session.stepSampled(next, chunk, sampler).back();
                const runtime::TierStats after = engine->tier->stats();
                if (done > 0 && after.doorbells >= 0) {
                    steady.counted = true;
                    steady.doorbells += after.doorbells - before.doorbells;
                    steady.syscalls += after.hostSyscalls - before.hostSyscalls;
                    steady.tokens += chunk;
                }
                done += chunk;
            }
            decodeRate = o.genTokens / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        } else if (o.gpuGreedy && o.genTokens > 0) {
            const auto start = std::chrono::steady_clock::now();
            engine->tier->generateGreedy(next, static_cast<int32_t>(session.history().size()), o.genTokens, c.nVocab);
            decodeRate = o.genTokens / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        } else {
            for (int32_t i = 0; i < o.genTokens; ++i) next = runtime::argmax(session.step(next));
            decodeRate = session.stats().decodeTokensPerSecond();
        }
        const auto& s = session.stats();
        if (o.promptTokens > 0) prefill.push_back(s.prefillTokensPerSecond());
        if (o.genTokens > 0) decode.push_back(decodeRate);
        fmt::print(stderr, "rep {}: prefill {:.1f} tok/s, decode {:.1f} tok/s\n", r + 1, s.prefillTokensPerSecond(),
                   decodeRate);
    }
    nlohmann::json j;
    j["model"] = o.model;
    j["model_summary"] = c.summary();
    j["weights_bytes"] = engine->model->weights().totalBytes();
    j["tier"] = engine->tier->name();
    j["tier_detail"] = engine->tier->describe();
    j["threads"] = global.threads;
    j["prompt_tokens"] = o.promptTokens;
    j["gen_tokens"] = o.genTokens;
    j["repetitions"] = o.repetitions;
    j["prefill_tok_s"] = prefill;
    j["decode_tok_s"] = decode;
    j["prefill_tok_s_mean"] = mean(prefill);
    j["decode_tok_s_mean"] = mean(decode);
    j["prefill_tok_s_best"] = prefill.empty() ? 0.0 : *std::max_element(prefill.begin(), prefill.end());
    j["decode_tok_s_best"] = decode.empty() ? 0.0 : *std::max_element(decode.begin(), decode.end());
    j["decode_mode"] = o.gpuSample ? "gpu-sample" : o.gpuGreedy ? "gpu-greedy" : "logits";
    const auto t = engine->tier->stats();
    if (t.decodeTokens > 0) {
        j["submissions_per_token"] = static_cast<double>(t.decodeSubmissions) / static_cast<double>(t.decodeTokens);
        j["host_us_per_token"] = t.decodeHostSeconds * 1e6 / static_cast<double>(t.decodeTokens);
        j["dispatches_per_token"] = t.dispatchesPerToken;
    }
    if (t.tokensInFlight > 0) j["tokens_in_flight"] = t.tokensInFlight;
    if (steady.counted && steady.tokens > 0) {
        j["doorbells_per_token"] = double(steady.doorbells) / double(steady.tokens);
        j["host_syscalls_per_token"] = double(steady.syscalls) / double(steady.tokens);
    } else if (t.doorbells >= 0 && t.decodeTokens > 0) {
        j["doorbells_per_token"] = double(t.doorbells) / double(t.decodeTokens);
        j["host_syscalls_per_token"] = double(t.hostSyscalls) / double(t.decodeTokens);
    }
    if (t.gpuTimedTokens > 0) j["gpu_ms_per_token"] = t.decodeGpuSeconds * 1e3 / static_cast<double>(t.gpuTimedTokens);
    std::cout << j.dump(2) << std::endl;
}

}  // namespace

void addBenchCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<BenchOptions>();
    auto* cmd = app.add_subcommand("bench", "prefill and decode tok/s as JSON");
    cmd->add_option("model", o->model, "GGUF model file")->required();
    cmd->add_option("-p,--prompt-tokens", o->promptTokens, "prompt length")->capture_default_str()->check(CLI::Range(0, 1 << 20));
    cmd->add_option("-n,--gen-tokens", o->genTokens, "tokens to decode")->capture_default_str()->check(CLI::Range(0, 1 << 20));
    cmd->add_option("-r,--repetitions", o->repetitions, "repetitions")->capture_default_str()->check(CLI::Range(1, 1000));
    cmd->add_option("--seed", o->seed, "seed of the random prompt")->capture_default_str();
    cmd->add_flag("--gpu-greedy", o->gpuGreedy,
                  "decode with the tier's own greedy loop (GPU tiers: argmax on the device, tokens queued ahead)");
    cmd->add_flag("--gpu-sample", o->gpuSample,
                  "decode as chat does: the sampler chain on the device (seed --seed), 16 tokens per call; with --loop, "
                  "doorbells_per_token and host_syscalls_per_token count the steady state (after the first call)");
    cmd->add_option("--sequences", o->sequences,
                    "continuous batching without the server: N sequences (a random prompt each, in its own KV slot) "
                    "decode together, one row each per step (Tier::evaluateRows, greedy on the host; with --gpu-greedy the "
                    "tier picks the ids, Tier::evaluateRowsGreedy; with --gpu-sample it draws them with a seeded chain a "
                    "sequence, Tier::evaluateRowsSampled); decode_tok_s counts all of them")
        ->check(CLI::Range(1, 256));
    cmd->add_flag("--kernels", o->kernels,
                  "vulkan tier: time each matvec shape of the decode graph alone (both kernel variants, GPU timestamps, "
                  "thousands of back-to-back calls each) against a copy kernel's bandwidth; JSON on stdout, a table on stderr");
    cmd->add_option("--kernels-tokens", o->kernelTokens, "with --kernels: activation rows per call, e.g. 1,8")
        ->delimiter(',')
        ->check(CLI::Range(1u, 64u))
        ->capture_default_str();
    cmd->add_option("--kernels-variants", o->kernelVariants,
                    "with --kernels: matvec kernels to time side by side, as ZINC_VK_MATVEC spells them "
                    "(v1, v2, v2:r=R:c=C:wg=W:s=0|1:p=P)")
        ->delimiter(',')
        ->capture_default_str();
    cmd->callback([o, &global] { runBench(*o, global); });
}

}  // namespace zinc::tools
