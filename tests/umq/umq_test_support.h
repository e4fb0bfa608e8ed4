#pragma once
// The simulated amdgpu node the umq tests share: one PoCL runner for the binary (building the
// kernel program is the slow part), a driver per test so its ioctl log starts empty.
#include <memory>
#include <vector>

#include "kernels/pocl_runner.h"
#include "tests/sim_pocl_runner.h"
#include "umq/drm_device.h"
#include "umq/amdgpu_uapi.h"
#include "kfd/sim/sim_dispatch.h"
#include "umq/sim_amdgpu.h"

namespace zinc::umq::testing {

inline std::shared_ptr<kernels::PoclRunner> sharedRunner() {
    return test::sharedPoclRunner();
}

// The driver's log from entry `from` on.
inline std::vector<std::string> since(const std::vector<std::string>& log, size_t from) { return {log.begin() + long(from), log.end()}; }

// The driver and the device opened over it (the device first to go).
struct SimNode {
    std::shared_ptr<SimAmdgpu> driver;
    std::unique_ptr<DrmDevice> device;
};

inline SimNode openNode(const std::string& gfx = "gfx1100", bool pocl = false, bool userQueues = true, bool cwsrMqd = false) {
    SimAmdgpuOptions o;
    o.pocl = pocl;
    o.userQueues = userQueues;
    o.cwsrMqd = cwsrMqd;
    if (pocl) o.runner = sharedRunner();
    auto driver = makeSimAmdgpu(gfx, o);
    if (!driver) throw std::runtime_error(driver.error().describe());
    DrmOptions d;
    d.renderPath = o.renderPath;
    d.label = "simulated ";
    d.syscalls = driver->get();
    auto device = openDrmDevice(d);
    if (!device) throw std::runtime_error(device.error().describe());
    return {*driver, std::move(*device)};
}

}  // namespace zinc::umq::testing

namespace zinc::umq::testing {

// Forwards every call to a driver and keeps the arguments of the ioctls the tests look at, as
// the drm path filled them (the fake-ioctl check of the real path's arguments).
class Recorder final : public DrmSyscalls {
public:
    explicit Recorder(DrmSyscalls& inner) : inner_(inner) {}
    int open(const char* path, int flags) override { return inner_.open(path, flags); }
    int close(int fd) override { return inner_.close(fd); }
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override {
        return inner_.mmap(addr, length, prot, flags, fd, offset);
    }
    int munmap(void* addr, size_t length) override { return inner_.munmap(addr, length); }
    void doorbellWritten(const volatile uint64_t* doorbell) override { inner_.doorbellWritten(doorbell); }
    void codeObjectLoaded(const kfd::LoadedCodeObject& l) override { inner_.codeObjectLoaded(l); }
    void codeObjectUnloaded(const kfd::LoadedCodeObject& l) override { inner_.codeObjectUnloaded(l); }
    int ioctl(int fd, unsigned long request, void* arg) override {
        requests.push_back(request);
        if (request == uapi::kIoctlUserq) userqs.push_back(static_cast<uapi::drm_amdgpu_userq*>(arg)->in);
        if (request == DRM_IOCTL_AMDGPU_CS) {
            const auto& in = static_cast<drm_amdgpu_cs*>(arg)->in;
            Job job{in.ctx_id, in.bo_list_handle, {}, {}, {}, {}};
            const auto* pointers = reinterpret_cast<const uint64_t*>(in.chunks);
            for (uint32_t i = 0; i < in.num_chunks; ++i) {
                const auto& c = *reinterpret_cast<const drm_amdgpu_cs_chunk*>(pointers[i]);
                job.chunkIds.push_back(c.chunk_id);
                if (c.chunk_id == AMDGPU_CHUNK_ID_IB) job.ibs.push_back(*reinterpret_cast<const drm_amdgpu_cs_chunk_ib*>(c.chunk_data));
                if (c.chunk_id == AMDGPU_CHUNK_ID_BO_HANDLES) job.list = *reinterpret_cast<const drm_amdgpu_bo_list_in*>(c.chunk_data);
                if (c.chunk_id == AMDGPU_CHUNK_ID_SYNCOBJ_OUT) job.syncobj = *reinterpret_cast<const drm_amdgpu_cs_chunk_sem*>(c.chunk_data);
            }
            jobs.push_back(job);
        }
        return inner_.ioctl(fd, request, arg);
    }

    struct Job {
        uint32_t ctx, boListHandle;
        std::vector<uint32_t> chunkIds;
        std::vector<drm_amdgpu_cs_chunk_ib> ibs;
        drm_amdgpu_bo_list_in list;
        drm_amdgpu_cs_chunk_sem syncobj;
    };
    std::vector<unsigned long> requests;
    std::vector<uapi::drm_amdgpu_userq_in> userqs;
    std::vector<Job> jobs;

private:
    DrmSyscalls& inner_;
};

// A device opened through a Recorder over a fresh driver.
struct RecordedNode {
    std::shared_ptr<SimAmdgpu> driver;
    std::unique_ptr<Recorder> recorder;
    std::unique_ptr<DrmDevice> device;
};

inline RecordedNode openRecordedNode() {
    SimAmdgpuOptions o;
    o.pocl = false;
    RecordedNode n;
    auto driver = makeSimAmdgpu("gfx1100", o);
    if (!driver) throw std::runtime_error(driver.error().describe());
    n.driver = *driver;
    n.recorder = std::make_unique<Recorder>(*n.driver);
    DrmOptions d;
    d.syscalls = n.recorder.get();
    auto device = openDrmDevice(d);
    if (!device) throw std::runtime_error(device.error().describe());
    n.device = std::move(*device);
    return n;
}

}  // namespace zinc::umq::testing
