// Sanitized builds only: driver_compiler_heap.cpp found the driver's compiler, and sends none of our own
// allocations past ASan.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "vulkan/vk_device.h"

extern "C" int __sanitizer_get_ownership(const volatile void* p);
int compilerHeapRanges();  // driver_compiler_heap.cpp

// vulkan_tests loads lavapipe (libLLVM), radv_compile_tests RADV (libvulkan_radeon, ACO).
TEST(DriverCompilerHeap, FoundTheCompilerOnceTheDriverWasLoaded) {
    bool compiles = false;
    try {
        for (const auto& caps : zinc::vk::listDevices())
            compiles |= caps.driverName.find("llvmpipe") != std::string::npos || caps.driverName.find("radv") != std::string::npos;
    } catch (const std::exception&) {
    }
    if (!compiles) GTEST_SKIP() << "neither lavapipe nor RADV here: no compiler to find";
    EXPECT_GE(compilerHeapRanges(), 1);
}

TEST(DriverCompilerHeap, OurAllocationsStayAsans) {
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
