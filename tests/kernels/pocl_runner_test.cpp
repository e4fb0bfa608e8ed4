// The PoCL runner as the simulated GPU uses it: SVM memory with base/size lookups, and
// launches that fail like a GPU fault would, naming the kernel and the argument.
#include <gtest/gtest.h>

#include "kernels/kernel_args.h"
#include "tests/kernels/kernel_test_support.h"

namespace zinc::kernels::test {
namespace {

TEST(PoclRunner, SvmAllocationsAreAlignedAndFoundByAnyInteriorPointer) {
    SvmAllocator& svm = runner().svm();
    const size_t before = svm.allocationCount();
    auto* page = static_cast<uint8_t*>(svm.alloc(10000, 4096));
    auto* small = static_cast<uint8_t*>(svm.alloc(3));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(page) % 4096, 0u);
    EXPECT_EQ(page[9999], 0) << "zero-filled";
    const auto inside = svm.find(page + 1234, 100);
    ASSERT_TRUE(inside.has_value());
    EXPECT_EQ(inside->base, page);
    EXPECT_EQ(inside->size, 10000u);
    EXPECT_FALSE(svm.find(page + 9990, 20).has_value()) << "range crossing the end";
    EXPECT_FALSE(svm.find(page + 10000).has_value());
    EXPECT_EQ(svm.find(small)->size, 3u);
    EXPECT_EQ(svm.allocationCount(), before + 2);
    svm.free(page);
    svm.free(small);
    EXPECT_FALSE(svm.find(page).has_value());
    EXPECT_THROW(svm.free(page + 8), PoclError);
    EXPECT_EQ(svm.allocationCount(), before);
}

std::string launchError(const char* name, std::span<const uint8_t> kernarg, Dim3 groups, Dim3 group) {
    try {
        runner().launch(codeObject().kernel(name), kernarg, groups, group);
    } catch (const PoclError& e) {
        return e.what();
    }
    return "(ran)";
}

TEST(PoclRunner, RefusesWhatAGpuWouldFaultOn) {
    SvmBuffer a(64 * 4), b(64 * 4);
    AddArgs args{a.addr(), b.addr(), a.addr(), 64, 64};
    std::vector<uint8_t> kernarg(sizeof(args));
    std::memcpy(kernarg.data(), &args, sizeof(args));
    EXPECT_EQ(launchError("add", kernarg, {1, 1, 1}, {256, 1, 1}), "(ran)");

    const std::string wrongGroup = launchError("add", kernarg, {1, 1, 1}, {64, 1, 1});
    EXPECT_NE(wrongGroup.find("kernel 'add': workgroup 64x1x1, the kernel requires 256x1x1"), std::string::npos) << wrongGroup;

    const std::string shortSegment = launchError("add", std::span(kernarg).first(16), {1, 1, 1}, {256, 1, 1});
    EXPECT_NE(shortSegment.find("kernarg segment of 16 bytes"), std::string::npos) << shortSegment;

    std::vector<float> host(64);
    args.b = reinterpret_cast<uint64_t>(host.data());  // not device memory
    std::memcpy(kernarg.data(), &args, sizeof(args));
    const std::string wild = launchError("add", kernarg, {1, 1, 1}, {256, 1, 1});
    EXPECT_NE(wild.find("kernel 'add' argument 1 'b' (kernarg offset 8, 8 bytes)"), std::string::npos) << wild;
    EXPECT_NE(wild.find("not inside any SVM allocation"), std::string::npos) << wild;
}

}  // namespace
}  // namespace zinc::kernels::test
