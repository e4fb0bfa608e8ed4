// Sanitized builds only (tests/vulkan/meson.build): what the Vulkan drivers' shader compilers
// allocate comes from glibc's heap, not ASan's: lavapipe's LLVM (vulkan_tests) and RADV's ACO
// (radv_compile_tests).
//
// With the shader cache empty lavapipe compiles every pipeline with LLVM (libLLVM, not built
// with ASan). LLVM makes and frees millions of small blocks a pipeline; through ASan's allocator
// each one records its stack, is poisoned, sits in the quarantine and is recycled from it. A
// test that compiles 20 pipelines cold took 17 s in the release build and 78 s under ASan,
// and perf put the difference in libasan's allocator and the kernel's page faults, not in LLVM.
// RADV compiles with ACO inside libvulkan_radeon; the same perf on radv_compile_tests (cache
// disabled by design): libasan 32 %, page faults 16 %, ACO itself 44 %.
//
// malloc, calloc, realloc, free and the operator new / delete that the compilers import (nm -D)
// are defined here, so they take precedence over libasan's in the dynamic link. A call whose
// return address lies in libLLVM's or libvulkan_radeon's code goes to glibc (__libc_malloc,
// ...); every other call goes to ASan's own functions, so our code, lavapipe's and the loader's
// stay fully checked. A block is freed by whichever allocator owns it
// (__sanitizer_get_ownership): LLVM frees what the driver allocated and the other way round.
// The compilers' code is found once the Vulkan loader has loaded the driver (the test
// environment below); until then every call goes to ASan.
#include <dlfcn.h>
#include <link.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "vulkan/vk_device.h"

extern "C" {
void* __interceptor_malloc(size_t size);  // libasan's
void* __interceptor_calloc(size_t count, size_t size);
void* __interceptor_realloc(void* p, size_t size);
void __interceptor_free(void* p);
int __sanitizer_get_ownership(const volatile void* p);
void* __libc_malloc(size_t size);  // glibc's
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* p, size_t size);
void __libc_free(void* p);
}

namespace {

// The compilers' executable segments; read by every allocation, written once.
constexpr int kMaxRanges = 8;
uintptr_t rangeBegin[kMaxRanges];
uintptr_t rangeEnd[kMaxRanges];
int rangeCount = 0;  // published last, with release order

#define ZINC_UNCHECKED __attribute__((no_sanitize("address", "undefined")))

ZINC_UNCHECKED inline bool fromCompiler(const void* returnAddress) {
    const int n = __atomic_load_n(&rangeCount, __ATOMIC_ACQUIRE);
    const auto a = reinterpret_cast<uintptr_t>(returnAddress);
    for (int i = 0; i < n; ++i)
        if (a >= rangeBegin[i] && a < rangeEnd[i]) return true;
    return false;
}

// A block of glibc's: only once a compiler is known can there be any. (Before ASan has started,
// its interceptors serve dlsym's allocations from a static pool that ASan does not count as its
// own either.)
ZINC_UNCHECKED inline bool fromGlibc(const void* p) {
    return p && __atomic_load_n(&rangeCount, __ATOMIC_ACQUIRE) > 0 && !__sanitizer_get_ownership(p);
}

// Collects the executable segments of every compiler library loaded; publishes them once.
int findCompilers(dl_phdr_info* info, size_t, void* found) {
    auto& n = *static_cast<int*>(found);
    if (!info->dlpi_name || !(strstr(info->dlpi_name, "libLLVM") || strstr(info->dlpi_name, "libvulkan_radeon"))) return 0;
    for (int i = 0; i < info->dlpi_phnum && n < kMaxRanges; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
        rangeBegin[n] = info->dlpi_addr + ph.p_vaddr;
        rangeEnd[n] = rangeBegin[n] + ph.p_memsz;
        ++n;
    }
    return 0;
}

}  // namespace

// How many executable segments of the compilers allocate from glibc (driver_compiler_heap_test.cpp).
int compilerHeapRanges() { return __atomic_load_n(&rangeCount, __ATOMIC_ACQUIRE); }

namespace {

// Before the first test: the Vulkan loader loads the driver (lavapipe and with it libLLVM, or
// RADV), after the test program's main set the loader's environment.
class FindTheCompiler : public ::testing::Environment {
public:
    void SetUp() override {
        try {
            (void)zinc::vk::Instance::shared();
        } catch (const std::exception&) {
            return;  // no Vulkan here: the tests say so themselves
        }
        int found = 0;
        dl_iterate_phdr(findCompilers, &found);
        __atomic_store_n(&rangeCount, found, __ATOMIC_RELEASE);
    }
};
[[maybe_unused]] ::testing::Environment* const findTheCompiler = ::testing::AddGlobalTestEnvironment(new FindTheCompiler);

// libasan's operator new / delete, the next definitions after this executable's.
template <typename F>
F asansOwn(const char* name) {
    static_assert(sizeof(F) == sizeof(void*));
    void* f = dlsym(RTLD_NEXT, name);
    F out;
    memcpy(&out, &f, sizeof out);
    return out;
}
using NewFn = void* (*)(size_t);
using NewNothrowFn = void* (*)(size_t, const std::nothrow_t&);
using DeleteFn = void (*)(void*);

}  // namespace

extern "C" ZINC_UNCHECKED void* malloc(size_t size) {
    return fromCompiler(__builtin_return_address(0)) ? __libc_malloc(size) : __interceptor_malloc(size);
}

extern "C" ZINC_UNCHECKED void* calloc(size_t count, size_t size) {
    return fromCompiler(__builtin_return_address(0)) ? __libc_calloc(count, size) : __interceptor_calloc(count, size);
}

extern "C" ZINC_UNCHECKED void* realloc(void* p, size_t size) {
    if (p) return fromGlibc(p) ? __libc_realloc(p, size) : __interceptor_realloc(p, size);
    return fromCompiler(__builtin_return_address(0)) ? __libc_malloc(size) : __interceptor_malloc(size);
}

bool framePoolTakes(void* block);  // lavapipe_frames.cpp

extern "C" ZINC_UNCHECKED void free(void* p) {
    if (framePoolTakes(p)) return;
    if (fromGlibc(p)) __libc_free(p);
    else __interceptor_free(p);
}

ZINC_UNCHECKED void* operator new(size_t size) {
    if (fromCompiler(__builtin_return_address(0))) {
        if (void* p = __libc_malloc(size ? size : 1)) return p;
        throw std::bad_alloc();
    }
    static const NewFn next = asansOwn<NewFn>("_Znwm");
    return next(size);
}

ZINC_UNCHECKED void* operator new[](size_t size) {
    if (fromCompiler(__builtin_return_address(0))) {
        if (void* p = __libc_malloc(size ? size : 1)) return p;
        throw std::bad_alloc();
    }
    static const NewFn next = asansOwn<NewFn>("_Znam");
    return next(size);
}

ZINC_UNCHECKED void* operator new(size_t size, const std::nothrow_t& tag) noexcept {
    if (fromCompiler(__builtin_return_address(0))) return __libc_malloc(size ? size : 1);
    static const NewNothrowFn next = asansOwn<NewNothrowFn>("_ZnwmRKSt9nothrow_t");
    return next(size, tag);
}

ZINC_UNCHECKED void operator delete(void* p) noexcept {
    if (fromGlibc(p)) return __libc_free(p);
    static const DeleteFn next = asansOwn<DeleteFn>("_ZdlPv");
    next(p);
}

ZINC_UNCHECKED void operator delete[](void* p) noexcept {
    if (fromGlibc(p)) return __libc_free(p);
    static const DeleteFn next = asansOwn<DeleteFn>("_ZdaPv");
    next(p);
}

// Sized deletes: libstdc++'s own code may free with them what LLVM's inlined code allocated.
using SizedDeleteFn = void (*)(void*, size_t);

ZINC_UNCHECKED void operator delete(void* p, size_t size) noexcept {
    if (fromGlibc(p)) return __libc_free(p);
    static const SizedDeleteFn next = asansOwn<SizedDeleteFn>("_ZdlPvm");
    next(p, size);
}

ZINC_UNCHECKED void operator delete[](void* p, size_t size) noexcept {
    if (fromGlibc(p)) return __libc_free(p);
    static const SizedDeleteFn next = asansOwn<SizedDeleteFn>("_ZdaPvm");
    next(p, size);
}
