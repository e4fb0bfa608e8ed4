// A GPU without Resizable BAR, simulated (SimOptions::cpuVisibleVramBytes): CPU-visible VRAM
// runs out at the BAR, VRAM outside it has no CPU pointer, StagedUpload packs copies into its
// GTT buffer and the CP's DMA_DATA moves them, and the kfd tier on a 1 MiB BAR decodes the same
// tokens as with all of VRAM visible.
#include <gtest/gtest.h>

#include <cerrno>
#include <numeric>

#include "kfd/tier/staged_upload.h"
#include "runtime/sampler.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"

namespace zinc::kfd {
namespace {

std::unique_ptr<Device> smallBarDevice(uint64_t barBytes) {
    Result<std::unique_ptr<Device>> d = openSimulatedDevice("gfx1100", {.runner = test::sharedRunner(), .cpuVisibleVramBytes = barBytes});
    if (!d) throw std::runtime_error(d.error().describe());
    return std::move(*d);
}

TEST(SmallBar, VisibleVramEndsAtTheBar) {
    std::unique_ptr<Device> device = smallBarDevice(1 << 20);
    Result<Memory> inside = device->allocMemory(768 << 10, MemoryKind::Vram);
    ASSERT_TRUE(inside.ok()) << inside.error().describe();
    Result<Memory> beyond = device->allocMemory(512 << 10, MemoryKind::Vram);
    ASSERT_FALSE(beyond.ok());
    EXPECT_EQ(beyond.error().errnum, ENOMEM);
    EXPECT_EQ(beyond.error().message, "CPU-visible VRAM, 524288 bytes: 786432 of the 1048576-byte BAR are in use "
                                      "(allocate without host access and copy through GTT)");
    Result<Memory> outside = device->allocMemory(4 << 20, MemoryKind::Vram, {.hostAccess = false});
    ASSERT_TRUE(outside.ok()) << outside.error().describe();
    EXPECT_EQ(outside->cpuPtr, nullptr);
    ASSERT_TRUE(device->freeMemory(*inside).ok());
    EXPECT_TRUE(device->allocMemory(512 << 10, MemoryKind::Vram).ok());  // freed visible VRAM is usable again
    EXPECT_TRUE(device->freeMemory(*outside).ok());
}

// Three pieces with an alignment gap, through a 16 KiB staging buffer: the first two share one
// DMA_DATA, the third (past the buffer's span) needs two more.
TEST(SmallBar, StagedUploadPacksCopiesAndTheCpMovesThem) {
    std::unique_ptr<Device> device = smallBarDevice(1 << 20);
    Result<Memory> vram = device->allocMemory(64 << 10, MemoryKind::Vram, {.hostAccess = false});
    ASSERT_TRUE(vram.ok()) << vram.error().describe();
    std::vector<uint8_t> a(5000), b(6000), c(20000);
    std::iota(a.begin(), a.end(), uint8_t(1));
    std::iota(b.begin(), b.end(), uint8_t(7));
    std::iota(c.begin(), c.end(), uint8_t(13));
    {
        StagedUpload upload(*device, 16 << 10);
        upload.copy(vram->gpuVa, a.data(), a.size(), "a");
        upload.copy(vram->gpuVa + 5120, b.data(), b.size(), "b");
        upload.copy(vram->gpuVa + 16384, c.data(), c.size(), "c");
        upload.flush();
        EXPECT_EQ(upload.packets(), 3u);
        EXPECT_EQ(upload.bytes(), 31000u);
    }
    // The simulated GPU's VRAM is host memory at its GPU address: read what the CP wrote.
    const auto* seen = reinterpret_cast<const uint8_t*>(vram->gpuVa);
    EXPECT_EQ(std::vector<uint8_t>(seen, seen + a.size()), a);
    EXPECT_EQ(std::vector<uint8_t>(seen + 5120, seen + 5120 + b.size()), b);
    EXPECT_EQ(std::vector<uint8_t>(seen + 16384, seen + 16384 + c.size()), c);
    EXPECT_TRUE(device->freeMemory(*vram).ok());
}

// stories260K at context 256 needs ~1.4 MiB of VRAM: on a 1 MiB BAR its weights and KV go outside, staged.
TEST(SmallBar, TokensEqualWithAndWithoutIt) {
    auto model = model::Model::load(test::sharedPath("models/stories260K.gguf"));
    const graph::Graph graph = graph::buildDecodeGraph(model->config(), model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = 256;
    options.maxBatch = 16;
    auto greedy = [&](std::shared_ptr<Device> device, std::string* describe) {
        std::unique_ptr<runtime::Tier> tier = makePm4Tier(graph, options, std::move(device));
        *describe = tier->describe();
        runtime::Session session(model->config(), *tier);
        std::vector<int32_t> tokens;
        int32_t token = 1;
        for (int i = 0; i < 12; ++i) tokens.push_back(token = runtime::argmax(session.step(token)));
        return tokens;
    };
    std::string wholeBar, smallBar;
    const std::vector<int32_t> want = greedy(test::simDevice(), &wholeBar);
    const std::vector<int32_t> got = greedy(smallBarDevice(1 << 20), &smallBar);
    EXPECT_EQ(got, want);
    EXPECT_EQ(wholeBar.find("BAR"), std::string::npos) << wholeBar;
    EXPECT_NE(smallBar.find("weights 1.1 MiB in VRAM outside the 1 MiB BAR (staged through a 1.1 MiB GTT buffer, 1 DMA_DATA copy; "
                            "KV cache outside it too)"),
              std::string::npos)
        << smallBar;
}

}  // namespace
}  // namespace zinc::kfd
