// Loading a code object into GPU memory: the same on Linux and on the simulated GPU (which adds
// its kernel registration on top). The image is the ELF's PT_LOAD segments at their virtual
// addresses (kernels::CodeObject::loadImage), so a kernel's descriptor and entry sit at
// image base + the addresses the metadata gives.
#include <cstring>

#include "kernels/code_object.h"
#include "kfd/device/device.h"

namespace zinc::kfd {

Result<LoadedKernel> LoadedCodeObject::kernel(std::string_view name) const {
    if (!object) return plainError("loadCodeObject", "no code object loaded");
    const kernels::KernelInfo* info = object->find(name);
    if (!info) {
        std::string known;
        for (const kernels::KernelInfo& k : object->kernels()) known += (known.empty() ? "" : ", ") + k.name;
        return plainError("loadCodeObject", "no kernel '" + std::string(name) + "' in " + object->origin() + " (it has: " + known + ")");
    }
    return LoadedKernel{info, image.gpuVa + info->descriptorAddress, image.gpuVa + info->entryAddress};
}

Result<LoadedCodeObject> Device::loadCodeObject(std::shared_ptr<const kernels::CodeObject> object) {
    if (!object) return plainError("loadCodeObject", "null code object");
    if (object->target() != caps().gfxName)
        return plainError("loadCodeObject", object->origin() + " is built for " + object->target() + ", this GPU is " + caps().gfxName);
    const std::vector<uint8_t> image = object->loadImage();
    Result<Memory> memory = allocMemory(image.size(), MemoryKind::Vram, {.executable = true});
    if (!memory) return memory.error();
    std::memcpy(memory->cpuPtr, image.data(), image.size());
    // Entries must be 256-byte aligned (COMPUTE_PGM_LO drops the low 8 bits); the image base is
    // page aligned, so the ELF's own alignment carries over.
    for (const kernels::KernelInfo& k : object->kernels()) {
        if ((memory->gpuVa + k.entryAddress) % 256 != 0) {
            Memory m = *memory;
            (void)freeMemory(m);
            return plainError("loadCodeObject", "kernel " + k.name + " entry is not 256-byte aligned in " + object->origin());
        }
    }
    return LoadedCodeObject{*memory, std::move(object)};
}

Status Device::unloadCodeObject(LoadedCodeObject& loaded) {
    Status s = freeMemory(loaded.image);
    loaded.object.reset();
    return s;
}

}  // namespace zinc::kfd
