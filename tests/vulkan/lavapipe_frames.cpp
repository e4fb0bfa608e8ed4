// Sanitized builds only (tests/vulkan/meson.build): lavapipe's coroutine frames, kept and
// handed out again instead of mapped and unmapped for every workgroup.
//
// Lavapipe runs a compute workgroup as one LLVM coroutine per 8 invocations, and allocates each
// coroutine's frame with posix_memalign(&p, 4096, n) when the workgroup starts and frees it when
// it ends. For our shaders n is 145 KiB - 2.3 MiB (counted by an allocation counter on this
// suite: 42,000 such frames in RolledSplitLoadsGiveThePlainLoadsBits alone). Glibc serves them from its
// heap after the first. ASan's allocator sends every block over 128 KiB to mmap, poisons its
// shadow, page-faults it in, and unmaps it from the quarantine: under ASan the vulkan suite spent
// most of its time in page faults and TLB shootdowns, 6x its release-build time, past CI's limit.
//
// posix_memalign defined here takes precedence over libasan's (weak) definition in the dynamic
// link; free (driver_compiler_heap.cpp, which defines it) asks framePoolTakes first. A
// 4096-aligned request of 128 KiB to 4 MiB is served from the pool below; any
// other request, and any block not from the pool, goes to ASan's own functions, so our code's
// allocations stay fully checked. Pool blocks are never returned (the suite's peak: a few dozen
// frames per lavapipe thread for each frame size).
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

extern "C" {
int __interceptor_posix_memalign(void** out, size_t alignment, size_t size);  // libasan's
void __interceptor_free(void* p);                                             // libasan's
}

namespace {

constexpr size_t kFrameAlignment = 4096;
constexpr size_t kSmallestFrame = size_t{128} << 10;  // ASan's largest block of its own heap
constexpr size_t kLargestFrame = size_t{4} << 20;     // past it: device memory, not frames
constexpr size_t kFrameGranule = size_t{32} << 10;    // frames are pooled in sizes of 32 KiB steps

struct FramePool {
    std::mutex mutex;
    std::unordered_map<size_t, std::vector<void*>> idle;  // by size
    std::unordered_map<void*, size_t> sizes;              // every block the pool made
};

FramePool& pool() {
    static auto* p = new FramePool();  // never destroyed: lavapipe's threads free frames at exit
    return *p;
}

// Set once the pool has made a block: until then (ASan's own start-up included, when
// instrumented code cannot run yet) free goes straight to ASan. Read and written with the
// compiler's builtins: inline, so nothing instrumented runs before the test.
bool poolUsed = false;

// Set while this thread changes the pool's containers: the blocks they free themselves go
// straight to ASan, never back into a container in the middle of its change.
thread_local bool inPool = false;

struct PoolLock {
    explicit PoolLock(FramePool& p) : lock(p.mutex) { inPool = true; }
    ~PoolLock() { inPool = false; }
    std::lock_guard<std::mutex> lock;
};

}  // namespace

#define ZINC_UNCHECKED __attribute__((no_sanitize("address", "undefined")))

extern "C" ZINC_UNCHECKED int posix_memalign(void** out, size_t alignment, size_t size) {
    if (alignment != kFrameAlignment || size < kSmallestFrame || size > kLargestFrame) return __interceptor_posix_memalign(out, alignment, size);
    size = (size + kFrameGranule - 1) / kFrameGranule * kFrameGranule;
    FramePool& p = pool();
    {
        const PoolLock lock(p);
        if (auto it = p.idle.find(size); it != p.idle.end() && !it->second.empty()) {
            *out = it->second.back();
            it->second.pop_back();
            return 0;
        }
    }
    const int result = __interceptor_posix_memalign(out, alignment, size);
    if (result == 0) {
        const PoolLock lock(p);
        p.sizes.emplace(*out, size);
        __atomic_store_n(&poolUsed, true, __ATOMIC_RELEASE);
    }
    return result;
}

// free (driver_compiler_heap.cpp) asks first: true when `block` is a frame, now back in the pool.
ZINC_UNCHECKED bool framePoolTakes(void* block) {
    // Only 4096-aligned blocks can be frames: everything else goes straight to ASan.
    if (block && __atomic_load_n(&poolUsed, __ATOMIC_ACQUIRE) && !inPool && reinterpret_cast<uintptr_t>(block) % kFrameAlignment == 0) {
        FramePool& p = pool();
        const PoolLock lock(p);
        if (auto it = p.sizes.find(block); it != p.sizes.end()) {
            p.idle[it->second].push_back(block);
            return true;
        }
    }
    return false;
}
