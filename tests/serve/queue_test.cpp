// The request queue and the job channel between HTTP threads and the engine thread.
#include <gtest/gtest.h>

#include <thread>

#include "tools/serve/bounded_fifo.h"
#include "tools/serve/job.h"

namespace zinc::serve {
namespace {

using namespace std::chrono_literals;

TEST(BoundedFifo, RefusesWhenFullAndKeepsOrder) {
    BoundedFifo<int> q(2);
    EXPECT_TRUE(q.tryPush(1));
    EXPECT_TRUE(q.tryPush(2));
    EXPECT_FALSE(q.tryPush(3));
    EXPECT_EQ(q.size(), 2u);
    EXPECT_EQ(q.pop(), 1);
    EXPECT_TRUE(q.tryPush(4));
    EXPECT_EQ(q.pop(), 2);
    EXPECT_EQ(q.pop(), 4);
}

TEST(BoundedFifo, CloseRefusesNewItemsAndDrainsTheRest) {
    BoundedFifo<int> q(4);
    q.tryPush(7);
    q.close();
    EXPECT_FALSE(q.tryPush(8));
    EXPECT_EQ(q.pop(), 7);
    EXPECT_EQ(q.pop(), std::nullopt);
}

TEST(BoundedFifo, CloseWakesAWaitingConsumer) {
    BoundedFifo<int> q(1);
    std::optional<int> got = 5;
    std::thread consumer([&] { got = q.pop(); });
    q.close();
    consumer.join();
    EXPECT_EQ(got, std::nullopt);
}

TEST(BoundedFifo, ManyProducersOneConsumerLoseNothing) {
    BoundedFifo<int> q(1000);
    std::vector<std::thread> producers;
    for (int t = 0; t < 4; ++t)
        producers.emplace_back([&, t] {
            for (int i = 0; i < 100; ++i) EXPECT_TRUE(q.tryPush(t * 100 + i));
        });
    for (auto& p : producers) p.join();
    q.close();
    std::vector<int> seen;
    while (auto v = q.pop()) seen.push_back(*v);
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen.size(), 400u);
    for (int i = 0; i < 400; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);
}

TEST(Job, TextThenTheResultReachTheWaitingSide) {
    Job job(JobInput{});
    job.pushText("Hel");
    job.pushText("lo");
    auto u = job.waitForUpdate(1ms);
    EXPECT_EQ(u.text, "Hello");
    EXPECT_FALSE(u.finished);
    std::thread engine([&] {
        job.pushText("!");
        job.finish({.reason = FinishReason::Length, .promptTokens = 3, .cachedTokens = 1, .completionTokens = 2, .error = {}});
    });
    std::string text;
    while (!(u = job.waitForUpdate(1000ms)).finished) text += u.text;
    text += u.text;
    engine.join();
    EXPECT_EQ(text, "!");
    EXPECT_EQ(job.result().reason, FinishReason::Length);
    EXPECT_EQ(job.result().completionTokens, 2);
    EXPECT_STREQ(finishReasonName(job.result().reason), "length");
}

TEST(Job, CancelIsSeenByTheEngineSide) {
    Job job(JobInput{});
    EXPECT_FALSE(job.cancelled());
    job.cancel();
    EXPECT_TRUE(job.cancelled());
}

}  // namespace
}  // namespace zinc::serve
