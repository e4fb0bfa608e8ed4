#pragma once
// The interface every tier implements: take the decode graph once, then evaluate tokens.
// A tier owns its copy of the weights (or maps them), its KV cache and its recorded plan.
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "runtime/sampler.h"
#include "runtime/capture.h"
#include "runtime/events.h"

namespace zinc::runtime {

// A tier that cannot run here (no device, missing feature) or failed while running; the
// message names the tier, the device or queue and what was looked for.
class TierError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// How the cpu tier rounds. Ggml reproduces llama.cpp's CPU backend (8-bit activation blocks
// for quantized weights, F16 KV cache, F16 attention accumulator): the goldens were made so.
// F32 keeps activations and the cache in fp32 (weights dequantized): the numbers of a plain
// float forward pass, e.g. tiny-qwen3-q8_0.ref_logits.txt.
enum class Precision { Ggml, F32 };

// The default activation budget where the arena is host memory (see TierOptions).
inline constexpr uint64_t kHostActivationBudget = uint64_t{64} << 20;

struct TierOptions {
    int32_t threads = 0;        // cpu tier: 0 = all cores
    int32_t contextLength = 0;  // KV cache length; 0 = min(model, 4096)
    int32_t maxBatch = 512;     // prompt tokens per batched (prefill) step, at most
    // Bytes the activation arena (every per-token graph buffer, one row per token of a step) may
    // take: a step takes as many tokens as fit, at most maxBatch (runtime/step_limits.h). 0: the
    // tier's default — kHostActivationBudget where the arena is host memory (cpu, the simulated
    // GPU, a CPU or integrated Vulkan device), maxBatch's whole arena in a discrete GPU's memory.
    uint64_t activationBudget = 0;
    Precision precision = Precision::Ggml;
    bool gpuTimestamps = false;  // GPU tiers: time every submission with timestamp queries
    int32_t device = 0;          // GPU tiers: which device (`zinc-rt devices` lists them)
    uint32_t waitTimeoutMs = 120000;  // GPU tiers: bound on every wait for a submission
    uint64_t deviceMemoryLimit = 0;   // GPU tiers: bytes of device memory to use at most; 0 = all it has
    // Sequence slots: KV regions of contextLength positions each that evaluateRows() may address
    // (continuous batching, `serve --parallel N`). The KV cache grows N-fold.
    int32_t sequences = 1;
    // Hybrid (DeltaNet) models: a batch runs the delta rule in chunks of this many tokens (the
    // chunked / WY form: matrix products within a chunk, the state carried across chunks);
    // 0 runs the token-by-token recurrence (the reference). cpu and vulkan tiers.
    int32_t deltaChunk = 64;
};

// One row of a batched step over several sequences (continuous batching): the token to run,
// the sequence slot whose KV region it reads and extends, its position in that sequence, and
// whether its logits are wanted.
struct SequenceRow {
    int32_t slot = 0;
    int32_t position = 0;
    int32_t token = 0;
    bool wantLogits = false;
    bool operator==(const SequenceRow&) const = default;
};

// How many of a step's rows want logits (or an id).
inline size_t wantedRows(std::span<const SequenceRow> rows) {
    size_t n = 0;
    for (const SequenceRow& r : rows) n += r.wantLogits ? 1 : 0;
    return n;
}

// Whether every row of a step is in a sequence slot of its own (decode rows): no row then
// waits on another's recurrent state, so a tier may step them side by side.
bool rowsInOwnSlots(std::span<const SequenceRow> rows);

// The sampler of one wanted row of a step and the tokens its repetition penalty looks back on
// (its sequence's prompt and output so far), for Tier::evaluateRowsSampled.
struct RowSampler {
    Sampler* sampler = nullptr;
    std::span<const int32_t> history;
};

// What a tier measured about its own work (GPU tiers; the cpu tier reports nothing). Decode
// figures count single-token evaluate() calls and greedy tokens.
struct TierStats {
    int64_t decodeTokens = 0;
    int64_t decodeSubmissions = 0;
    double decodeHostSeconds = 0;  // host time per call outside the wait for the GPU
    double decodeGpuSeconds = 0;   // from timestamps, when TierOptions::gpuTimestamps
    int64_t gpuTimedTokens = 0;
    int64_t dispatchesPerToken = 0;
    // PM4 tiers (-1: not counted): doorbells rung and calls into the kernel (submissions, waits
    // that blocked) so far, and how many tokens one submission may carry.
    int64_t doorbells = -1;
    int64_t hostSyscalls = -1;
    int32_t tokensInFlight = 0;
};

enum class LogitsWanted { Last, All };

class Tier {
public:
    virtual ~Tier() = default;
    virtual std::string name() const = 0;
    // One line for logs and bench JSON: device, threads, kernel flavour.
    virtual std::string describe() const = 0;
    virtual int32_t contextLength() const = 0;
    virtual int32_t maxBatch() const = 0;

    // Runs tokens at positions startPos.. (1 token = decode, more = batched prefill, at most
    // maxBatch()). Writes nVocab logits for the last token, or for every token, into logits.
    // Cache entries past startPos + tokens.size() are not read; earlier ones are reused.
    virtual void evaluate(std::span<const int32_t> tokens, int32_t startPos, LogitsWanted which,
                          std::span<float> logits) = 0;

    // Greedy generation: feeds firstToken at startPos, then each argmax back in, n times;
    // returns the n argmax ids. GPU tiers override it to sample on the device and queue
    // tokens ahead; this default loops over evaluate().
    virtual std::vector<int32_t> generateGreedy(int32_t firstToken, int32_t startPos, int32_t n, int32_t nVocab) {
        std::vector<int32_t> out;
        std::vector<float> logits(static_cast<size_t>(nVocab));
        int32_t token = firstToken;
        for (int32_t i = 0; i < n; ++i) {
            evaluate(std::span<const int32_t>(&token, 1), startPos + i, LogitsWanted::Last, logits);
            int32_t best = 0;
            for (int32_t v = 1; v < nVocab; ++v)
                if (logits[static_cast<size_t>(v)] > logits[static_cast<size_t>(best)]) best = v;
            out.push_back(token = best);
        }
        return out;
    }

    // Sampled generation: feeds firstToken at startPos, then each sampled token back in, n
    // tokens in all; the last one is returned but not fed. `history` holds the tokens fed so
    // far including firstToken (the repetition penalty reads it); `sampler` goes on with its
    // draw sequence. samplesOnDevice says whether this tier keeps the chain on the device
    // (tokens queued ahead, no logits read back); this default samples on the host.
    virtual bool samplesOnDevice(const SamplerParams&) const { return false; }
    virtual std::vector<int32_t> generateSampled(int32_t firstToken, int32_t startPos, int32_t n, Sampler& sampler,
                                                 std::vector<int32_t> history, int32_t nVocab) {
        std::vector<int32_t> out;
        std::vector<float> logits(static_cast<size_t>(nVocab));
        int32_t token = firstToken;
        for (int32_t i = 0; i < n; ++i) {
            evaluate(std::span<const int32_t>(&token, 1), startPos + i, LogitsWanted::Last, logits);
            out.push_back(token = sampler.sample(logits, history));
            history.push_back(token);
        }
        return out;
    }

    // Continuous batching. sequenceSlots(): the KV regions this tier holds (TierOptions::sequences
    // where it batches sequences, else 1). evaluateRows() runs rows of several sequences in one
    // step, so one weight read serves them all: each row at its own position in its own slot's
    // KV region (a slot's rows in increasing positions, at most maxBatch() rows in all), and
    // writes nVocab logits for each wanted row, in row order. Cache entries of a slot past a
    // row's position are not read. This default takes one slot's consecutive positions whose
    // last row alone wants logits (what one sequence's prefill or decode asks) through
    // evaluate(); anything else is a TierError (runtime/sequence_rows.cpp).
    virtual int32_t sequenceSlots() const { return 1; }
    virtual void evaluateRows(std::span<const SequenceRow> rows, std::span<float> logits);
    // The same step, greedy: ids[i] is the argmax (the first index of the largest of nVocab
    // logits, runtime::argmax) of the i-th wanted row, in row order; ids holds at least one per
    // wanted row. GPU tiers override it to pick the ids on the device and read back only them;
    // this default reads the logits back through evaluateRows (runtime/sequence_rows.cpp).
    virtual void evaluateRowsGreedy(std::span<const SequenceRow> rows, int32_t nVocab, std::span<int32_t> ids);
    // The same step, sampled: ids[i] is what samplers[i] draws from the i-th wanted row's logits
    // (Sampler::sample over samplers[i].history), and each sampler goes on with its draw sequence
    // as sample() leaves it. A tier that samples on the device (every row's chain
    // samplesOnDevice) draws the same ids there and reads back only them; this default reads
    // the logits back through evaluateRows and samples on the host.
    virtual void evaluateRowsSampled(std::span<const SequenceRow> rows, int32_t nVocab, std::span<const RowSampler> samplers,
                                     std::span<int32_t> ids);
    // Whether evaluateRowsSampled draws a row with chain `p` on the device. Where it does not,
    // a caller with threads to spare (serve) samples the logits itself, several rows at once.
    virtual bool samplesRowsOnDevice(const SamplerParams&) const { return false; }

    virtual TierStats stats() const { return {}; }

    // A flag the caller raises to cancel the generation in progress (serve: the client left). A
    // tier that generates on the device without the host (kfd/umq --loop) stops within the token
    // it is on; others finish the call. nullptr: none. The flag must outlive its setting.
    virtual void setCancelFlag(const std::atomic<bool>*) {}

    // Hybrid models keep a recurrent state that cannot be rewound. saveStateSnapshot copies it
    // as it stands after the last evaluate (one slot, on the device for GPU tiers) and says
    // whether it did; restoreStateSnapshot puts it back, so the next evaluate goes on from the
    // snapshot's position. Tiers without recurrent state keep nothing.
    virtual bool saveStateSnapshot() { return false; }
    virtual void restoreStateSnapshot() { throw TierError(name() + " tier: holds no state snapshot"); }
    // The same for one sequence slot's state (evaluateRows; every tier keeps a copy of the state
    // per slot, graph::MemoryPlan::stateCopies): a snapshot a slot, slot 0's apart from evaluate()'s.
    virtual bool saveSlotSnapshot(int32_t /*slot*/) { return false; }
    virtual void restoreSlotSnapshot(int32_t slot) {
        throw TierError(name() + " tier: holds no state snapshot of sequence slot " + std::to_string(slot));
    }

    // Tracing (runtime/events.h): events of the following evaluate() calls go to `log`
    // (nullptr: off, nothing is recorded). A tier that cannot trace throws TierError.
    virtual void setEventLog(EventLog* log) {
        if (log) throw TierError(name() + " tier: records no events (runtime/events.h)");
    }
    // Debug capture (runtime/capture.h): op outputs of the following one-token evaluate()
    // calls go to `capture` (nullptr: off). A tier that cannot capture throws TierError.
    virtual void setCapture(Capture* capture) {
        if (capture) throw TierError(name() + " tier: cannot capture op outputs (runtime/capture.h)");
    }
};

// Sets a capture on a tier for one scope, and clears it again (also when the step throws).
class CaptureScope {
public:
    CaptureScope(Tier& tier, Capture& capture) : tier_(tier) { tier_.setCapture(&capture); }
    ~CaptureScope() {
        try {
            tier_.setCapture(nullptr);
        } catch (...) {
        }
    }
    CaptureScope(const CaptureScope&) = delete;
    CaptureScope& operator=(const CaptureScope&) = delete;

private:
    Tier& tier_;
};

}  // namespace zinc::runtime
