#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "runtime/cpu/thread_pool.h"

namespace zinc::cpu {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
    for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        for (int64_t n : {1, 7, 64, 1000}) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
            for (int round = 0; round < 50; ++round)
                pool.parallelFor(n, 3, [&](int64_t b, int64_t e, int t) {
                    EXPECT_LT(t, threads);
                    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
                });
            for (auto& h : hits) EXPECT_EQ(h.load(), 50);
        }
    }
}

}  // namespace
}  // namespace zinc::cpu
