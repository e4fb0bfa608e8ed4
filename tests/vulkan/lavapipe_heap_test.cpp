// Sanitized builds only: lavapipe_compiler_heap.cpp found libLLVM, and sends none of our own
// allocations past ASan.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "vulkan/vk_device.h"

extern "C" int __sanitizer_get_ownership(const volatile void* p);
int compilerHeapRanges();  // lavapipe_compiler_heap.cpp

TEST(LavapipeCompilerHeap, FoundLibLlvmOnceLavapipeWasLoaded) {
    bool lavapipe = false;
    try {
        for (const auto& caps : zinc::vk::listDevices()) lavapipe |= caps.driverName.find("llvmpipe") != std::string::npos;
    } catch (const std::exception&) {
    }
    if (!lavapipe) GTEST_SKIP() << "no lavapipe device: nothing of libLLVM to find";
    EXPECT_GE(compilerHeapRanges(), 1);
}

TEST(LavapipeCompilerHeap, OurAllocationsStayAsans) {
    void* m = std::malloc(24);
    void* c = std::calloc(3, 8);
    void* r = std::realloc(std::malloc(8), 4096);
    auto object = std::make_unique<std::vector<int>>(1000, 7);
    auto array = std::make_unique<char[]>(300);
    EXPECT_TRUE(__sanitizer_get_ownership(m));
    EXPECT_TRUE(__sanitizer_get_ownership(c));
    EXPECT_TRUE(__sanitizer_get_ownership(r));
    EXPECT_TRUE(__sanitizer_get_ownership(object.get()));
    EXPECT_TRUE(__sanitizer_get_ownership(object->data()));
    EXPECT_TRUE(__sanitizer_get_ownership(array.get()));
    std::free(m);
    std::free(c);
    std::free(r);
}
