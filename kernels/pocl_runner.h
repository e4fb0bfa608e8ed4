#pragma once
// Runs the kernels' OpenCL C source on PoCL's CPU device, the way the simulated AMD GPU
// executes a DISPATCH_DIRECT: the kernel is named by the code object's metadata, and its
// arguments are decoded from the kernarg segment bytes with that metadata (.args offsets,
// sizes and kinds) — global pointers become SVM pointers, by-value arguments are copied.
// Memory the kernels touch must come from svm() (fine-grained buffer SVM).
#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>

#include "kernels/code_object.h"
#include "kernels/svm_allocator.h"

namespace zinc::kernels {

class PoclError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Dim3 {
    uint32_t x = 1, y = 1, z = 1;
};

class PoclRunner {
public:
    // Finds PoCL's CPU device (through the OpenCL ICD loader) and checks that it has
    // fine-grained buffer SVM. The program is built from kernelSource() on first launch.
    PoclRunner();
    ~PoclRunner();
    PoclRunner(const PoclRunner&) = delete;
    PoclRunner& operator=(const PoclRunner&) = delete;

    SvmAllocator& svm() { return *svm_; }
    std::string deviceName() const;

    // Builds the program now (PoCL compiles on first use; this makes the cost explicit).
    void build();

    // Runs `kernel` over `groups` workgroups of `groupSize` work-items (DISPATCH_DIRECT's
    // DIM_X/Y/Z and NUM_THREAD_X/Y/Z) and waits for it. Pointer arguments must be null or
    // inside an SVM allocation. Throws PoclError naming the kernel, argument and offset.
    void launch(const KernelInfo& kernel, std::span<const uint8_t> kernarg, Dim3 groups, Dim3 groupSize);

private:
    cl_kernel kernelFor(const KernelInfo& info);
    void setArgs(cl_kernel k, const KernelInfo& info, std::span<const uint8_t> kernarg);

    cl_platform_id platform_ = nullptr;
    cl_device_id device_ = nullptr;
    cl_context context_ = nullptr;
    cl_command_queue queue_ = nullptr;
    cl_program program_ = nullptr;
    std::unique_ptr<SvmAllocator> svm_;
    std::map<std::string, cl_kernel, std::less<>> kernels_;
    std::mutex mutex_;
};

// "CL_INVALID_VALUE (-30)" for an OpenCL error code.
std::string clErrorName(cl_int code);

}  // namespace zinc::kernels
