#pragma once
// Helpers shared by the render-node device (drm_device.cpp) and its CS route (drm_cs.cpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kfd/device/hex.h"
#include "kfd/device/kernel_ring.h"
#include "umq/drm_device.h"

namespace zinc::umq {

// One ioctl, retried while the kernel says "interrupted" (libdrm drmIoctl does the same); any
// other failure keeps its errno, named by `name` and `what`.
kfd::Status drmIoctl(DrmSyscalls& sys, int fd, unsigned long request, void* arg, const char* name, const std::string& what);

// The CS route on an open render node: a context, and per job the IB chunks, a BO_HANDLES chunk
// listing `liveHandles()` (every BO of the device: the kernel makes them resident for the job)
// and a SYNCOBJ_OUT chunk whose syncobj the wait blocks on.
kfd::Result<std::unique_ptr<kfd::KernelRing>> openCsRing(DrmSyscalls& sys, int fd, std::string renderPath,
                                                         std::function<std::vector<uint32_t>()> liveHandles);

using kfd::hex;  // "0x1f", as the kfd doors write values

}  // namespace zinc::umq
