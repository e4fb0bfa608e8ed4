#include "tools/serve/batch_engine.h"

#include <fmt/format.h>

#include <algorithm>

namespace zinc::serve {

BatchEngine::BatchEngine(const model::Model& model, runtime::Tier& tier, int32_t parallel, int32_t prefillChunk,
                         size_t queueCapacity)
    : model_(model),
      tier_(tier),
      prefillChunk_(prefillChunk),
      slots_(parallel, tier.contextLength(), model.config().hybrid.enabled()),
      running_(static_cast<size_t>(parallel)),
      // The cpu tier's own threads take every core for the step; the sampling threads, which
      // spin a little after their work, would only get in its way there.
      samplers_(tier.name() == "cpu" ? 1 : std::min(parallel, cpu::defaultThreadCount())),
      queue_(queueCapacity) {
    if (tier.sequenceSlots() < parallel)
        throw runtime::TierError(fmt::format("{} tier: holds {} sequence slots, --parallel {} needs as many", tier.name(),
                                             tier.sequenceSlots(), parallel));
    thread_ = std::thread([this] { run(); });
}

BatchEngine::~BatchEngine() { stop(); }

bool BatchEngine::submit(std::shared_ptr<Job> job) { return queue_.tryPush(std::move(job)); }

// Running jobs see the flag at the next step; queued ones are cancelled as they are taken.
void BatchEngine::stop() {
    stopping_ = true;
    queue_.close();
    if (thread_.joinable()) thread_.join();
}

void BatchEngine::run() {
    while (true) {
        // Join between steps: every free slot takes a waiting job; with none running, wait.
        while (slots_.busyCount() < slots_.slots()) {
            auto job = slots_.busyCount() == 0 ? queue_.pop() : queue_.tryPop();
            if (!job) break;
            admit(std::move(*job));
        }
        if (slots_.busyCount() == 0) {
            if (queue_.closedAndEmpty()) return;
            continue;
        }
        step();
    }
}

bool BatchEngine::admit(std::shared_ptr<Job> job) {
    if (stopping_) job->cancel();
    if (job->cancelled()) {
        JobResult result;
        result.promptTokens = static_cast<int32_t>(job->input().prompt.size());
        result.reason = FinishReason::Cancelled;
        ++cancelled_;
        job->finish(std::move(result));
        return false;
    }
    int32_t slot = -1;
    try {
        // The HTTP side checks the prompt's length; this is the last guard.
        slot = slots_.claim(job->input().prompt);
        // A hybrid going on from its slot's snapshot (SequenceSlots' recurrent state).
        if (slots_.resumesFromSnapshot(slot)) tier_.restoreSlotSnapshot(slot);
    } catch (const std::exception& e) {
        if (slot >= 0) slots_.forget(slot);
        JobResult result;
        result.reason = FinishReason::Error;
        result.error = e.what();
        ++failed_;
        job->finish(std::move(result));
        return false;
    }
    Running& r = running_[static_cast<size_t>(slot)];
    r.job = std::move(job);
    r.generation.emplace(*r.job, model_.tokenizer());
    r.generation->result().cachedTokens = slots_.reusedTokens(slot);
    busy_ = static_cast<size_t>(slots_.busyCount());
    return true;
}

void BatchEngine::finish(int32_t slot, FinishReason reason, std::string error) {
    Running& r = running_[static_cast<size_t>(slot)];
    JobResult result = std::move(r.generation->result());
    if (reason == FinishReason::Cancelled || reason == FinishReason::Error) result.reason = reason;
    result.error = std::move(error);
    auto& count = result.reason == FinishReason::Cancelled ? cancelled_
                  : result.reason == FinishReason::Error   ? failed_
                                                           : completed_;
    ++count;
    r.job->finish(std::move(result));
    r.generation.reset();
    r.job.reset();
    if (reason == FinishReason::Error) slots_.forget(slot);  // its cache may hold part of the failed step
    else slots_.release(slot);
    busy_ = static_cast<size_t>(slots_.busyCount());
}

void BatchEngine::step() {
    for (int32_t slot = 0; slot < slots_.slots(); ++slot) {
        Running& r = running_[static_cast<size_t>(slot)];
        if (r.job && (stopping_ || r.job->cancelled())) finish(slot, FinishReason::Cancelled);
    }
    const std::vector<runtime::SequenceRow> rows = slots_.nextStep(tier_.maxBatch(), prefillChunk_);
    if (rows.empty()) return;
    const size_t vocab = static_cast<size_t>(model_.config().nVocab);
    const size_t wanted = runtime::wantedRows(rows);
    // Every wanted row's job takes the argmax: the tier picks the ids (on a GPU tier, no logits
    // come back), and each job accepts its id as next() would have picked it. Every wanted row's
    // job samples plainly with a chain the tier runs itself: the tier draws the ids with the
    // jobs' samplers, the same way.
    bool argmaxOnly = wanted > 0, tierSamples = wanted > 0;
    for (const runtime::SequenceRow& row : rows)
        if (row.wantLogits) {
            Running& r = running_[static_cast<size_t>(row.slot)];
            argmaxOnly = argmaxOnly && r.job && r.generation->picksArgmax();
            tierSamples = tierSamples && r.job && r.generation->samplesPlainly() &&
                          tier_.samplesRowsOnDevice(r.generation->sampler().params());
        }
    const bool idsOnly = argmaxOnly || tierSamples;
    try {
        if (argmaxOnly) {
            ids_.assign(wanted, -1);
            tier_.evaluateRowsGreedy(rows, model_.config().nVocab, ids_);
        } else if (tierSamples) {
            ids_.assign(wanted, -1);
            histories_.clear();
            rowSamplers_.clear();
            for (const runtime::SequenceRow& row : rows)  // only the tail the penalty reads, not the whole context
                if (row.wantLogits)
                    histories_.push_back(slots_.historyTail(
                        row.slot, running_[static_cast<size_t>(row.slot)].generation->sampler().params().penaltyWindow()));
            size_t k = 0;
            for (const runtime::SequenceRow& row : rows)
                if (row.wantLogits)
                    rowSamplers_.push_back({&running_[static_cast<size_t>(row.slot)].generation->sampler(), histories_[k++]});
            tier_.evaluateRowsSampled(rows, model_.config().nVocab, rowSamplers_, ids_);
        } else {
            logits_.resize(vocab * std::max<size_t>(wanted, 1));
            tier_.evaluateRows(rows, logits_);
        }
    } catch (const std::exception& e) {
        for (const runtime::SequenceRow& row : rows)
            if (running_[static_cast<size_t>(row.slot)].job) finish(row.slot, FinishReason::Error, e.what());
        return;
    }
    slots_.ran(rows);
    // Hybrids: a prompt that has run up to its last token leaves its state for the next turn.
    for (int32_t slot : slots_.snapshotsDue())
        if (tier_.saveSlotSnapshot(slot)) slots_.snapshotSaved(slot);
    std::vector<int32_t> wantedSlots;
    for (const runtime::SequenceRow& row : rows)
        if (row.wantLogits) wantedSlots.push_back(row.slot);
    picks_.assign(wantedSlots.size(), Pick{});
    // Each job's generation is its own (sampler, text, grammar); the tokenizer is immutable.
    samplers_.parallelFor(static_cast<int64_t>(wantedSlots.size()), 1, [&](int64_t begin, int64_t end, int) {
        for (int64_t k = begin; k < end; ++k) {
            const int32_t slot = wantedSlots[static_cast<size_t>(k)];
            Pick& pick = picks_[static_cast<size_t>(k)];
            JobGeneration& generation = *running_[static_cast<size_t>(slot)].generation;
            try {
                if (idsOnly) {
                    pick.next = generation.accept(ids_[static_cast<size_t>(k)], slots_.room(slot));
                    continue;
                }
                const std::span<const float> logits(logits_.data() + vocab * static_cast<size_t>(k), vocab);
                pick.next = generation.next(logits, slots_.cached(slot), slots_.room(slot));
            } catch (const std::exception& e) {
                pick.error = e.what();
            }
        }
    });
    for (size_t k = 0; k < wantedSlots.size(); ++k) {
        const Pick& pick = picks_[k];
        if (!pick.error.empty()) finish(wantedSlots[k], FinishReason::Error, pick.error);
        else if (pick.next) slots_.append(wantedSlots[k], *pick.next);
        else finish(wantedSlots[k], FinishReason::Stop);
    }
}

}  // namespace zinc::serve
