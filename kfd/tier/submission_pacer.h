#pragma once
// Tokens per submission through the kernel's ring (CS): amdgpu resets a job that runs past its
// job timeout (lockup_timeout, 10 s for compute rings), and a submission of sampled tokens is
// one job. At a fixed 32 tokens a slow model (a large one on a small card, a few tok/s) would
// outrun it and have its context reset mid-generation. The pacer sizes each job from the
// measured time per token so that it takes at most a quarter of the timeout (two jobs are in
// flight, the second waiting behind the first, and later tokens read a longer KV cache); until a
// job has been timed, one token. Queues of our own (a doorbell) have no such limit: `most`.
#include <cstdint>

namespace zinc::kfd {

class SubmissionPacer {
public:
    // jobTimeoutMs 0: no limit, every submission takes `most` tokens.
    SubmissionPacer(int32_t most, uint32_t jobTimeoutMs)
        : most_(most), jobTimeoutMs_(jobTimeoutMs), budgetSeconds_(jobTimeoutMs * 1e-3 / 4) {}
    // Tokens for the next submission: 1..most.
    int32_t next() const;
    // A submission of `tokens` tokens ran for `seconds` on the GPU (from when it could start,
    // after the job before it, to when its fence was seen).
    void ran(int32_t tokens, double seconds);
    double secondsPerToken() const { return secondsPerToken_; }  // < 0 until a job was timed
    double budgetSeconds() const { return budgetSeconds_; }
    uint32_t jobTimeoutMs() const { return jobTimeoutMs_; }

private:
    int32_t most_;
    uint32_t jobTimeoutMs_;
    double budgetSeconds_;
    double secondsPerToken_ = -1;
};

}  // namespace zinc::kfd
