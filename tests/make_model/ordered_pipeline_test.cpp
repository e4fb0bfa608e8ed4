// The ordered pipeline hands chunks to the consumer in order whatever the producers' timing,
// and stops cleanly on the first error of either side.
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "model/make_model/ordered_pipeline.h"

namespace zinc::model {
namespace {

TEST(OrderedPipeline, ConsumesInOrderWithUnevenProducers) {
    std::vector<size_t> seen;
    OrderedPipeline p{200, 16, 4, nullptr, nullptr};
    p.produce = [](size_t k, uint8_t* out) {
        if (k % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
        for (size_t i = 0; i < 16; ++i) out[i] = static_cast<uint8_t>(k + i);
        return 1 + k % 16;
    };
    p.consume = [&](size_t k, std::span<const uint8_t> bytes) {
        ASSERT_EQ(bytes.size(), 1 + k % 16);
        EXPECT_EQ(bytes[0], static_cast<uint8_t>(k));
        seen.push_back(k);
    };
    runOrderedPipeline(p);
    ASSERT_EQ(seen.size(), 200u);
    for (size_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], k);
}

TEST(OrderedPipeline, ProducerErrorIsRethrown) {
    OrderedPipeline p{100, 4, 3, nullptr, nullptr};
    p.produce = [](size_t k, uint8_t*) -> size_t {
        if (k == 37) throw std::runtime_error("chunk 37 failed");
        return 0;
    };
    size_t consumed = 0;
    p.consume = [&](size_t, std::span<const uint8_t>) { ++consumed; };
    EXPECT_THROW(runOrderedPipeline(p), std::runtime_error);
    EXPECT_LE(consumed, 37u);
}

TEST(OrderedPipeline, ConsumerErrorStopsProducers) {
    OrderedPipeline p{1000, 4, 2, nullptr, nullptr};
    p.produce = [](size_t, uint8_t*) -> size_t { return 4; };
    p.consume = [](size_t k, std::span<const uint8_t>) {
        if (k == 5) throw std::runtime_error("disk full");
    };
    EXPECT_THROW(runOrderedPipeline(p), std::runtime_error);
}

}  // namespace
}  // namespace zinc::model
