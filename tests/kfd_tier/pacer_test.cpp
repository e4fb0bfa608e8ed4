// Sampled tokens per CS job (kfd/tier/submission_pacer.h): a job stays within a quarter of the
// kernel's job timeout at the measured rate; one token until a job was timed; a queue of ours
// takes the configured count. Pure arithmetic on given times: no clock.
#include <gtest/gtest.h>

#include "kfd/tier/submission_pacer.h"

namespace zinc::kfd {
namespace {

TEST(SubmissionPacer, AQueueOfOursTakesTheConfiguredCount) {
    SubmissionPacer pacer(32, 0);
    EXPECT_EQ(pacer.next(), 32);
    pacer.ran(32, 100.0);  // however slow: no timeout to stay inside
    EXPECT_EQ(pacer.next(), 32);
}

TEST(SubmissionPacer, TheFirstJobIsOneTokenThenAQuarterOfTheTimeout) {
    SubmissionPacer pacer(32, 10000);  // amdgpu's 10 s: 2.5 s a job
    EXPECT_DOUBLE_EQ(pacer.budgetSeconds(), 2.5);
    EXPECT_EQ(pacer.next(), 1) << "the rate is unknown";
    pacer.ran(1, 0.010);  // 100 tok/s: 250 would fit
    EXPECT_EQ(pacer.next(), 32);
    pacer.ran(32, 32 * 0.2);  // 5 tok/s (a large model on a small card)
    EXPECT_EQ(pacer.next(), 12);
    pacer.ran(12, 12 * 4.0);  // slower than the budget a token: still one token a job
    EXPECT_EQ(pacer.next(), 1);
    pacer.ran(1, 0.05);  // it speeds up again: the latest job's rate counts
    EXPECT_EQ(pacer.next(), 32);
}

TEST(SubmissionPacer, IgnoresEmptyJobs) {
    SubmissionPacer pacer(16, 300);
    pacer.ran(0, 1.0);
    EXPECT_EQ(pacer.next(), 1);
    pacer.ran(4, 0.030);  // 7.5 ms a token, 75 ms a job: 10
    EXPECT_EQ(pacer.next(), 10);
}

}  // namespace
}  // namespace zinc::kfd
