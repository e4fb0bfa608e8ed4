#include "runtime/sequence_slots.h"

#include <fmt/format.h>

#include <algorithm>

namespace zinc::runtime {

SequenceSlots::SequenceSlots(int32_t slots, int32_t contextLength)
    : slots_(static_cast<size_t>(std::max(1, slots))), contextLength_(contextLength) {}

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
        const auto shared = static_cast<size_t>(mismatch.first - s.cached.begin());
        if (best < 0 || shared > bestShared) {
            best = static_cast<int32_t>(i);
            bestShared = shared;
        }
    }
    if (best < 0) return -1;
    Slot& s = at(best);
    const size_t reused = std::min(bestShared, prompt.size() - 1);
    s.busy = true;
    s.cached.resize(reused);
    s.pending.assign(prompt.begin() + static_cast<ptrdiff_t>(reused), prompt.end());
    s.reused = static_cast<int32_t>(reused);
    s.claimedAt = claims_++;
    return best;
}

void SequenceSlots::release(int32_t slot) {
    Slot& s = at(slot);
    s.busy = false;
    s.pending.clear();
}

void SequenceSlots::forget(int32_t slot) {
    release(slot);
    at(slot).cached.clear();
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
        const auto take = std::min<int64_t>({static_cast<int64_t>(s.pending.size()), budget, maxRows - static_cast<int64_t>(rows.size())});
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
    }
}

}  // namespace zinc::runtime
