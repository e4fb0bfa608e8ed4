#include "kernels/pocl_runner.h"

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "kernels/embedded.h"

namespace zinc::kernels {
namespace {

void check(cl_int err, const std::string& what) {
    if (err != CL_SUCCESS) throw PoclError(fmt::format("PoCL: {} failed: {}", what, clErrorName(err)));
}

std::string platformString(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, s.data(), nullptr);
    s.resize(std::strlen(s.c_str()));
    return s;
}

// The OpenCL C version PoCL's CPU device compiles (1.2), with the numerics options the code
// objects were built with.
std::string buildOptions() { return fmt::format("-cl-std=CL1.2 {}", kKernelNumericsOptions); }

}  // namespace

std::string clErrorName(cl_int code) {
    switch (code) {
#define ZK_CL_ERROR(name) case name: return fmt::format("{} ({})", #name, code);
        ZK_CL_ERROR(CL_DEVICE_NOT_FOUND) ZK_CL_ERROR(CL_OUT_OF_RESOURCES) ZK_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
        ZK_CL_ERROR(CL_BUILD_PROGRAM_FAILURE) ZK_CL_ERROR(CL_INVALID_VALUE) ZK_CL_ERROR(CL_INVALID_PLATFORM)
        ZK_CL_ERROR(CL_INVALID_DEVICE) ZK_CL_ERROR(CL_INVALID_CONTEXT) ZK_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
        ZK_CL_ERROR(CL_INVALID_PROGRAM) ZK_CL_ERROR(CL_INVALID_KERNEL_NAME) ZK_CL_ERROR(CL_INVALID_KERNEL)
        ZK_CL_ERROR(CL_INVALID_ARG_INDEX) ZK_CL_ERROR(CL_INVALID_ARG_VALUE) ZK_CL_ERROR(CL_INVALID_ARG_SIZE)
        ZK_CL_ERROR(CL_INVALID_KERNEL_ARGS) ZK_CL_ERROR(CL_INVALID_WORK_DIMENSION) ZK_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
        ZK_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE) ZK_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
        ZK_CL_ERROR(CL_INVALID_BUILD_OPTIONS) ZK_CL_ERROR(CL_INVALID_OPERATION)
#undef ZK_CL_ERROR
        case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (-1001)";
        default: return fmt::format("OpenCL error {}", code);
    }
}

PoclRunner::PoclRunner() {
    cl_uint count = 0;
    const cl_int err = clGetPlatformIDs(0, nullptr, &count);
    if (err != CL_SUCCESS || count == 0)
        throw PoclError(fmt::format("PoCL: no OpenCL platform found ({}); install pocl-opencl-icd", clErrorName(err)));
    std::vector<cl_platform_id> platforms(count);
    check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
    std::string seen;
    for (cl_platform_id p : platforms) {
        const std::string name = platformString(p, CL_PLATFORM_NAME);
        seen += (seen.empty() ? "" : ", ") + name;
        if (name.find("Portable Computing Language") != std::string::npos || platformString(p, CL_PLATFORM_VENDOR).find("pocl") != std::string::npos) {
            platform_ = p;
            break;
        }
    }
    if (!platform_) throw PoclError(fmt::format("PoCL: no PoCL platform among the OpenCL platforms [{}]", seen));
    check(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_CPU, 1, &device_, nullptr), "clGetDeviceIDs(CPU)");
    cl_device_svm_capabilities svm = 0;
    check(clGetDeviceInfo(device_, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, nullptr), "clGetDeviceInfo(SVM capabilities)");
    if (!(svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER)) throw PoclError("PoCL: the CPU device has no fine-grained buffer SVM");
    cl_int e = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &e);
    check(e, "clCreateContext");
    queue_ = clCreateCommandQueueWithProperties(context_, device_, nullptr, &e);
    check(e, "clCreateCommandQueueWithProperties");
    svm_ = std::make_unique<SvmAllocator>(context_);
}

PoclRunner::~PoclRunner() {
    for (auto& [name, k] : kernels_) clReleaseKernel(k);
    svm_.reset();
    if (program_) clReleaseProgram(program_);
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
}

std::string PoclRunner::deviceName() const {
    size_t n = 0;
    clGetDeviceInfo(device_, CL_DEVICE_NAME, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetDeviceInfo(device_, CL_DEVICE_NAME, n, s.data(), nullptr);
    s.resize(std::strlen(s.c_str()));
    return s;
}

void PoclRunner::build() {
    std::lock_guard lock(mutex_);
    if (program_) return;
    const std::string_view source = kernelSource();
    const char* text = source.data();
    const size_t length = source.size();
    cl_int e = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &e);
    check(e, "clCreateProgramWithSource");
    const std::string options = buildOptions();
    e = clBuildProgram(program, 1, &device_, options.c_str(), nullptr, nullptr);
    if (e != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
        std::string log(n, '\0');
        clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
        clReleaseProgram(program);
        throw PoclError(fmt::format("PoCL: building the kernel source ({}) failed: {}\n{}", options, clErrorName(e), log));
    }
    program_ = program;
}

cl_kernel PoclRunner::kernelFor(const KernelInfo& info) {
    if (const auto it = kernels_.find(info.name); it != kernels_.end()) return it->second;
    cl_int e = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program_, info.name.c_str(), &e);
    if (e != CL_SUCCESS)
        throw PoclError(fmt::format("PoCL: kernel '{}' of the code object is not in the kernel source: {}", info.name, clErrorName(e)));
    cl_uint nargs = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, nullptr);
    if (nargs != info.explicitArgCount()) {
        clReleaseKernel(k);
        throw PoclError(fmt::format("PoCL: kernel '{}' takes {} arguments in the source but {} in the code object metadata", info.name,
                                    nargs, info.explicitArgCount()));
    }
    kernels_.emplace(info.name, k);
    return k;
}

void PoclRunner::setArgs(cl_kernel k, const KernelInfo& info, std::span<const uint8_t> kernarg) {
    cl_uint index = 0;
    for (const auto& a : info.args) {
        if (a.kind == ArgKind::Hidden) continue;  // PoCL computes its own
        const std::string where = fmt::format("kernel '{}' argument {} '{}' (kernarg offset {}, {} bytes)", info.name, index, a.name,
                                              a.offset, a.size);
        if (a.kind == ArgKind::GlobalBuffer) {
            uint64_t address = 0;
            std::memcpy(&address, kernarg.data() + a.offset, sizeof(address));
            void* p = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
            if (p && !svm_->find(p)) throw PoclError(fmt::format("{} = 0x{:x} is not inside any SVM allocation", where, address));
            check(clSetKernelArgSVMPointer(k, index, p), "clSetKernelArgSVMPointer for " + where);
        } else if (a.kind == ArgKind::ByValue) {
            check(clSetKernelArg(k, index, a.size, kernarg.data() + a.offset), "clSetKernelArg for " + where);
        } else {
            throw PoclError(fmt::format("{} has value kind {}, which the runner cannot pass", where, a.valueKind));
        }
        ++index;
    }
}

void PoclRunner::launch(const KernelInfo& kernel, std::span<const uint8_t> kernarg, Dim3 groups, Dim3 groupSize) {
    if (kernarg.size() < kernel.kernargSegmentSize)
        throw PoclError(fmt::format("kernel '{}': kernarg segment of {} bytes, the metadata says {}", kernel.name, kernarg.size(),
                                    kernel.kernargSegmentSize));
    const auto& reqd = kernel.reqdWorkgroupSize;
    if (reqd[0] && (groupSize.x != reqd[0] || groupSize.y != reqd[1] || groupSize.z != reqd[2]))
        throw PoclError(fmt::format("kernel '{}': workgroup {}x{}x{}, the kernel requires {}x{}x{}", kernel.name, groupSize.x, groupSize.y,
                                    groupSize.z, reqd[0], reqd[1], reqd[2]));
    const uint64_t threads = uint64_t{groupSize.x} * groupSize.y * groupSize.z;
    if (threads == 0 || threads > kernel.maxFlatWorkgroupSize)
        throw PoclError(fmt::format("kernel '{}': workgroup of {} work-items (limit {})", kernel.name, threads, kernel.maxFlatWorkgroupSize));
    if (groups.x == 0 || groups.y == 0 || groups.z == 0) return;  // an empty dispatch does nothing
    build();
    std::lock_guard lock(mutex_);
    cl_kernel k = kernelFor(kernel);
    setArgs(k, kernel, kernarg);
    const size_t global[3] = {size_t{groups.x} * groupSize.x, size_t{groups.y} * groupSize.y, size_t{groups.z} * groupSize.z};
    const size_t local[3] = {groupSize.x, groupSize.y, groupSize.z};
    check(clEnqueueNDRangeKernel(queue_, k, 3, nullptr, global, local, 0, nullptr, nullptr),
          fmt::format("clEnqueueNDRangeKernel of '{}' ({}x{}x{} groups)", kernel.name, groups.x, groups.y, groups.z));
    check(clFinish(queue_), fmt::format("clFinish after '{}'", kernel.name));
}

}  // namespace zinc::kernels
