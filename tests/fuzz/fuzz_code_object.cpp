// Arbitrary bytes as an AMD code object: CodeObject::parse either accepts them or throws
// CodeObjectError naming the object; nothing else may escape. What it accepts must hold
// together: the loaded image is as large as it says and every kernel's descriptor lies in it.
#include <cstdio>
#include <cstdlib>

#include "kernels/code_object.h"

using namespace zinc::kernels;

namespace {

void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz_code_object: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const LaunchSupport support{.hiddenArgs = {"hidden_block_count_x"}, .scratch = size % 2 == 0};
    try {
        const CodeObject object = CodeObject::parse({data, size}, "fuzz.hsaco", support);
        // A huge image is refused by parse (the loader caps it); only then is it built here.
        const uint64_t imageSize = object.imageSize();
        if (imageSize <= (64u << 20)) check(object.loadImage().size() == imageSize, "loadImage() size differs from imageSize()");
        for (const KernelInfo& k : object.kernels()) {
            check(k.descriptorAddress + 64 <= imageSize, "a kernel descriptor outside the image");
            check(object.find(k.name) == &k, "find() does not return the kernel by its name");
            (void)object.findByEntry(k.entryAddress);
        }
    } catch (const CodeObjectError&) {
    }
    return 0;
}
