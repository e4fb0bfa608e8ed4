#include "runtime/sequence_slots.h"

#include <fmt/format.h>

#include <algorithm>

namespace zinc::runtime {

SequenceSlots::SequenceSlots(int32_t slots, int32_t contextLength, bool recurrentState)
    : slots_(static_cast<size_t>(std::max(1, slots))), contextLength_(contextLength), recurrentState_(recurrentState) {}

int32_t SequenceSlots::busyCount() const {
    return static_cast<int32_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; }));
}

int32_t SequenceSlots::claim(std::span<const int32_t> prompt) {
    if (prompt.empty() || static_cast<int64_t>(prompt.size()) >= contextLength_)
        throw TierError(fmt::format("a prompt of {} tokens does not fit a sequence slot of {} positions", prompt.size(),
                                    contextLength_));
    int32_t best = -1;
    size_t bestShared = 0;
    for (size_t i = 0; i < slots_.size(); ++i) {
        const Slot& s = slots_[i];
        if (s.busy) continue;
        const auto mismatch = std::mismatch(s.cached.begin(), s.cached.end(), prompt.begin(), prompt.end());
        auto shared = static_cast<size_t>(mismatch.first - s.cached.begin());
        if (recurrentState_) shared = resumable(s, shared, prompt.size());
        if (best < 0 || shared > bestShared) {
            best = static_cast<int32_t>(i);
            bestShared = shared;
        }
    }
    if (best < 0) return -1;
    Slot& s = at(best);
    const size_t reused = std::min(bestShared, prompt.size() - 1);
    s.fromSnapshot = recurrentState_ && reused > 0 && reused != s.cached.size();
    if (s.snapshotAt > static_cast<int32_t>(reused)) s.snapshotAt = -1;  // its tokens are about to be overwritten
    s.snapshotDue = false;
    s.busy = true;
    s.cached.resize(reused);
    s.pending.assign(prompt.begin() + static_cast<ptrdiff_t>(reused), prompt.end());
    s.reused = static_cast<int32_t>(reused);
    s.claimedAt = claims_++;
    return best;
}

// Recurrent state: of `shared` tokens of a slot's cache that begin the prompt, where the state
// can go on from: the whole cache, or the snapshot inside it, each short of the prompt; else 0.
size_t SequenceSlots::resumable(const Slot& s, size_t shared, size_t promptSize) {
    if (shared == s.cached.size() && shared < promptSize) return shared;
    const auto snapshot = static_cast<size_t>(std::max(0, s.snapshotAt));
    return snapshot <= shared && snapshot < promptSize ? snapshot : 0;
}

std::vector<int32_t> SequenceSlots::snapshotsDue() const {
    std::vector<int32_t> due;
    for (size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].snapshotDue) due.push_back(static_cast<int32_t>(i));
    return due;
}

void SequenceSlots::snapshotSaved(int32_t slot) {
    Slot& s = at(slot);
    s.snapshotDue = false;
    s.snapshotAt = static_cast<int32_t>(s.cached.size());
}

void SequenceSlots::release(int32_t slot) {
    Slot& s = at(slot);
    s.busy = false;
    s.pending.clear();
}

void SequenceSlots::forget(int32_t slot) {
    release(slot);
    at(slot).cached.clear();
    at(slot).snapshotAt = -1;
    at(slot).snapshotDue = false;
}

void SequenceSlots::append(int32_t slot, int32_t token) { at(slot).pending.push_back(token); }

int32_t SequenceSlots::room(int32_t slot) const {
    const Slot& s = at(slot);
    return contextLength_ - static_cast<int32_t>(s.cached.size() + s.pending.size());
}

std::vector<SequenceRow> SequenceSlots::nextStep(int32_t maxRows, int32_t prefillBudget) const {
    std::vector<SequenceRow> rows;
    std::vector<int32_t> prefilling;
    for (size_t i = 0; i < slots_.size(); ++i) {
        const Slot& s = slots_[i];
        if (!s.busy || s.pending.empty()) continue;
        if (s.pending.size() > 1) {
            prefilling.push_back(static_cast<int32_t>(i));
        } else if (static_cast<int32_t>(rows.size()) < maxRows) {
            rows.push_back({static_cast<int32_t>(i), static_cast<int32_t>(s.cached.size()), s.pending[0], true});
        }
    }
    std::sort(prefilling.begin(), prefilling.end(), [&](int32_t a, int32_t b) { return at(a).claimedAt < at(b).claimedAt; });
    int32_t budget = std::max(1, prefillBudget);
    for (int32_t slot : prefilling) {
        const Slot& s = at(slot);
        const auto prompt = static_cast<int64_t>(s.pending.size()) - (recurrentState_ ? 1 : 0);
        const auto take = std::min<int64_t>({prompt, budget, maxRows - static_cast<int64_t>(rows.size())});
        for (int64_t j = 0; j < take; ++j)
            rows.push_back({slot, static_cast<int32_t>(s.cached.size() + static_cast<size_t>(j)), s.pending[static_cast<size_t>(j)],
                            static_cast<size_t>(j + 1) == s.pending.size()});
        budget -= static_cast<int32_t>(take);
        if (budget <= 0) break;
    }
    return rows;
}

std::vector<int32_t> SequenceSlots::historyTail(int32_t slot, size_t n) const {
    const Slot& s = at(slot);
    const size_t fromPending = std::min(n, s.pending.size()), fromCached = std::min(n - fromPending, s.cached.size());
    std::vector<int32_t> out(s.cached.end() - static_cast<ptrdiff_t>(fromCached), s.cached.end());
    out.insert(out.end(), s.pending.end() - static_cast<ptrdiff_t>(fromPending), s.pending.end());
    return out;
}

void SequenceSlots::ran(std::span<const SequenceRow> rows) {
    for (const SequenceRow& r : rows) {
        Slot& s = at(r.slot);
        s.cached.push_back(s.pending.front());
        s.pending.erase(s.pending.begin());
        // A prompt chunk that leaves only the prompt's last token (recurrent state: nextStep
        // never takes it with the rest).
        s.snapshotDue = recurrentState_ && s.pending.size() == 1 && !r.wantLogits;
    }
}

}  // namespace zinc::runtime
