#include "kfd/tier/submission_pacer.h"

#include <algorithm>
#include <cmath>

namespace zinc::kfd {

int32_t SubmissionPacer::next() const {
    if (budgetSeconds_ <= 0) return most_;
    if (secondsPerToken_ < 0) return std::min(1, most_);
    if (secondsPerToken_ == 0) return most_;
    const double fit = std::floor(budgetSeconds_ / secondsPerToken_);
    return int32_t(std::clamp(fit, 1.0, double(most_)));
}

void SubmissionPacer::ran(int32_t tokens, double seconds) {
    if (tokens <= 0 || seconds < 0) return;
    // The latest job's rate: tokens get slower as the KV cache grows, and the budget's margin
    // (a quarter of the timeout) covers the next job's growth.
    secondsPerToken_ = seconds / tokens;
}

}  // namespace zinc::kfd
