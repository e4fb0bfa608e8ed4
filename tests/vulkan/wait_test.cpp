// Bounded waits on the vulkan tier: a submission that can never finish (held back by a timeline
// semaphore nobody signals) ends the wait after its timeout with an error naming what was
// waited for, the queue and its timeline, instead of hanging; and the tier's own waits take
// the --wait-timeout bound.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "tests/vulkan/vulkan_fixture.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_error.h"
#include "vulkan/vk_queue.h"

namespace zinc {
namespace {

VkSemaphore timelineSemaphore(const vk::Device& device) {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    info.pNext = &type;
    VkSemaphore s = VK_NULL_HANDLE;
    vk::check(vkCreateSemaphore(device.handle(), &info, nullptr, &s), "vkCreateSemaphore");
    return s;
}

TEST(VulkanWait, NeverSignalledSemaphoreTimesOutWithQueueState) {
    ZINC_REQUIRE_VULKAN();
    vk::Device device(vk::Instance::shared(), 0);
    vk::Queue queue(device);
    const VkSemaphore never = timelineSemaphore(device);
    VkCommandBuffer cmd = queue.allocate();
    vk::beginReusable(cmd);
    vk::end(cmd);
    const uint64_t value = queue.submit({&cmd, 1}, {.semaphore = never, .value = 1});
    const auto start = std::chrono::steady_clock::now();
    try {
        queue.wait(value, std::chrono::milliseconds(300), "vulkan tier: 1 token(s) at position 42");
        ADD_FAILURE() << "the wait returned although the submission cannot run";
    } catch (const vk::VkError& e) {
        const std::string m = e.what();
        std::printf("%s\n", m.c_str());
        EXPECT_EQ(e.result(), VK_TIMEOUT);
        for (const char* part : {"1 token(s) at position 42", "submission 1 did not finish within 300 ms", "queue family",
                                 device.caps().name.c_str(), "timeline semaphore is at 0", "1 submitted"})
            EXPECT_NE(m.find(part), std::string::npos) << "missing '" << part << "' in: " << m;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    // Release it so the queue drains before the device goes away.
    VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    signal.semaphore = never;
    signal.value = 1;
    vk::check(vkSignalSemaphore(device.handle(), &signal), "vkSignalSemaphore");
    queue.wait(value, std::chrono::seconds(10), "drain");
    EXPECT_EQ(queue.completed(), value);
    queue.free(cmd);
    vkDestroySemaphore(device.handle(), never, nullptr);
}

// A one-off submission (runOnce) whose wait timed out is still running: its command buffer
// stays in the pool, and the queue's teardown waits for it (its fills land) before the pool
// goes. The submission waits on an event the host sets later. (The tier's own teardown drains
// the same way; before, a feed that outlived its wait had its plan and memory freed under it:
// a use-after-free in lavapipe's queue thread, VulkanCoopmatEmulatedTest on a cold cache.)
TEST(VulkanWait, TeardownDrainsWhatATimedOutWaitLeftRunning) {
    ZINC_REQUIRE_VULKAN();
    vk::Device device(vk::Instance::shared(), 0);
    VkEventCreateInfo info{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent late = VK_NULL_HANDLE;
    vk::check(vkCreateEvent(device.handle(), &info, nullptr, &late), "vkCreateEvent");
    vk::DeviceBuffer filled(device, 4096, vk::MemoryKind::HostVisible, "filled after the event");
    std::memset(filled.mapped(), 0, 4096);
    std::thread releaser;
    const auto start = std::chrono::steady_clock::now();
    {
        vk::Queue queue(device);
        const auto holdBack = [&](VkCommandBuffer cmd) {
            vkCmdWaitEvents(cmd, 1, &late, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, nullptr, 0,
                            nullptr, 0, nullptr);
            for (uint32_t i = 0; i < 64; ++i) vkCmdFillBuffer(cmd, filled.handle(), 64 * i, 64, 0x5a5a0000u + i);
        };
        EXPECT_THROW(queue.runOnce(holdBack, std::chrono::milliseconds(100), "held back"), vk::VkError);
        releaser = std::thread([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            vkSetEvent(device.handle(), late);
        });
    }  // ~Queue: drains, then frees the pool
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
    const auto* words = static_cast<const uint32_t*>(filled.mapped());
    for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(words[16 * i], 0x5a5a0000u + i) << "fill " << i << " did not run";
    releaser.join();
    vkDestroyEvent(device.handle(), late, nullptr);
}

// A value nobody will ever submit: the same bounded error, not a hang.
TEST(VulkanWait, WaitPastTheLastSubmissionTimesOut) {
    ZINC_REQUIRE_VULKAN();
    vk::Device device(vk::Instance::shared(), 0);
    vk::Queue queue(device);
    EXPECT_THROW(queue.wait(queue.submitted() + 1, std::chrono::milliseconds(100), "a fence nobody signals"), vk::VkError);
}

}  // namespace
}  // namespace zinc
