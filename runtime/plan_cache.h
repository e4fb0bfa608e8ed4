#pragma once
// The recorded plans of a GPU tier by shape (tokens per step, which rows, what the plan ends
// in), recorded when first asked for. At `capacity` the batched plans go and the one-token
// (decode) plans stay: a prompt of many lengths cannot push out what every token runs.
// Only call get() while no plan is in flight (the tiers wait for each evaluate()).
#include <cstddef>
#include <functional>
#include <map>
#include <utility>

namespace zinc::runtime {

template <class Key, class Plan>
class PlanCache {
public:
    // `release`: frees what a dropped plan holds that its destructor does not (e.g. a
    // command buffer that belongs to a pool).
    explicit PlanCache(size_t capacity, std::function<void(Plan&)> release = {})
        : capacity_(capacity), release_(std::move(release)) {}

    const Plan* find(const Key& key) const {
        const auto it = plans_.find(key);
        return it == plans_.end() ? nullptr : &it->second;
    }

    // The plan for `key`, recorded by record() (returns a Plan) if there is none.
    template <class Record>
    const Plan& get(const Key& key, Record&& record) {
        if (const Plan* plan = find(key)) return *plan;
        if (plans_.size() >= capacity_) {
            for (auto it = plans_.begin(); it != plans_.end();) it = it->first.nTokens > 1 ? erase(it) : std::next(it);
        }
        return plans_.emplace(key, record()).first->second;
    }

    void drop(const Key& key) {
        if (auto it = plans_.find(key); it != plans_.end()) erase(it);
    }
    void clear() {
        for (auto it = plans_.begin(); it != plans_.end();) it = erase(it);
    }

private:
    using Map = std::map<Key, Plan>;
    typename Map::iterator erase(typename Map::iterator it) {
        if (release_) release_(it->second);
        return plans_.erase(it);
    }

    size_t capacity_;
    std::function<void(Plan&)> release_;
    Map plans_;
};

}  // namespace zinc::runtime
