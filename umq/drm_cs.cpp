// The CS ioctl route (FACTS.md §6.1): DRM_IOCTL_AMDGPU_CTX allocates a context; each job is one
// DRM_IOCTL_AMDGPU_CS with an IB chunk per indirect buffer (compute IP, ring 0), a BO_HANDLES
// chunk and a SYNCOBJ_OUT chunk; DRM_IOCTL_SYNCOBJ_WAIT waits for it with an absolute deadline.
// The chunk layout follows Mesa's amdgpu winsys (an inline BO list: operation and list_handle ~0).
#include <time.h>

#include <array>
#include <cerrno>
#include <mutex>

#include "umq/amdgpu_uapi.h"
#include "umq/drm_ioctl.h"

namespace zinc::umq {
namespace {

constexpr uint32_t kSyncobjSlots = 64;  // jobs in flight at once (the tier keeps a few)

int64_t monotonicNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

class CsRing final : public kfd::KernelRing {
public:
    CsRing(DrmSyscalls& sys, int fd, std::string render, std::function<std::vector<uint32_t>()> handles)
        : sys_(sys), fd_(fd), render_(std::move(render)), handles_(std::move(handles)) {}
    ~CsRing() override;

    kfd::Status init();
    std::string name() const override { return "amdgpu CS, context " + std::to_string(ctx_) + ", compute ring 0 (" + render_ + ")"; }
    kfd::Result<uint64_t> submit(std::span<const kfd::IbRange> ibs) override;
    kfd::Status wait(uint64_t job, uint32_t timeoutMs) override;
    std::string resetState() override;
    std::optional<kfd::QueueState> queueState() const override {
        kfd::QueueState s;
        sys_.addSimulatorState(nullptr, s);
        return s.insideIb || s.fault ? std::optional<kfd::QueueState>(s) : std::nullopt;
    }
    uint32_t jobTimeoutMs() const override { return jobTimeoutMs_; }
    std::string describe() const override {
        std::lock_guard lock(mutex_);
        return name() + ": " + std::to_string(submitted_) + " job(s) submitted, " + std::to_string(retired_) + " known retired";
    }

private:
    kfd::Result<uint32_t> syncobjFor(uint64_t job);

    DrmSyscalls& sys_;
    int fd_;
    std::string render_;
    std::function<std::vector<uint32_t>()> handles_;
    uint32_t ctx_ = 0;
    uint32_t jobTimeoutMs_ = 0;  // the kernel's, read once at init (lockup_timeout)
    mutable std::mutex mutex_;
    std::array<uint32_t, kSyncobjSlots> syncobjs_{};  // job % slots; created on first use
    uint64_t submitted_ = 0, retired_ = 0;
};

CsRing::~CsRing() {
    for (uint32_t& h : syncobjs_)
        if (h) {
            drm_syncobj_destroy d{h, 0};
            (void)drmIoctl(sys_, fd_, DRM_IOCTL_SYNCOBJ_DESTROY, &d, "SYNCOBJ_DESTROY", "");
        }
    if (ctx_) {
        drm_amdgpu_ctx c{};
        c.in.op = AMDGPU_CTX_OP_FREE_CTX;
        c.in.ctx_id = ctx_;
        (void)drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_CTX, &c, "AMDGPU_CTX", "free");
    }
}

kfd::Status CsRing::init() {
    drm_amdgpu_ctx c{};
    c.in.op = AMDGPU_CTX_OP_ALLOC_CTX;
    c.in.priority = AMDGPU_CTX_PRIORITY_NORMAL;
    if (kfd::Status s = drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_CTX, &c, "AMDGPU_CTX", "allocating a context on " + render_); !s) return s;
    ctx_ = c.out.alloc.ctx_id;
    jobTimeoutMs_ = sys_.computeJobTimeoutMs();
    return {};
}

kfd::Result<uint32_t> CsRing::syncobjFor(uint64_t job) {
    uint32_t& h = syncobjs_[job % kSyncobjSlots];
    if (!h) {
        drm_syncobj_create c{0, 0};
        if (kfd::Status s = drmIoctl(sys_, fd_, DRM_IOCTL_SYNCOBJ_CREATE, &c, "SYNCOBJ_CREATE", "the syncobj of CS job " + std::to_string(job)); !s)
            return s.error();
        h = c.handle;
    }
    return h;
}

kfd::Result<uint64_t> CsRing::submit(std::span<const kfd::IbRange> ibs) {
    std::lock_guard lock(mutex_);
    const uint64_t job = submitted_ + 1;
    kfd::Result<uint32_t> syncobj = syncobjFor(job);
    if (!syncobj) return syncobj.error();
    std::vector<drm_amdgpu_cs_chunk_ib> ibChunks(ibs.size());
    std::vector<drm_amdgpu_cs_chunk> chunks;
    for (size_t i = 0; i < ibs.size(); ++i) {
        ibChunks[i] = drm_amdgpu_cs_chunk_ib{};
        ibChunks[i].va_start = ibs[i].address;
        ibChunks[i].ib_bytes = ibs[i].dwords * 4;
        ibChunks[i].ip_type = AMDGPU_HW_IP_COMPUTE;
        ibChunks[i].ip_instance = 0;
        ibChunks[i].ring = 0;
        chunks.push_back({AMDGPU_CHUNK_ID_IB, uint32_t(sizeof(drm_amdgpu_cs_chunk_ib) / 4), reinterpret_cast<uint64_t>(&ibChunks[i])});
    }
    const std::vector<uint32_t> handles = handles_();
    std::vector<drm_amdgpu_bo_list_entry> entries;
    for (uint32_t h : handles) entries.push_back({h, 0});
    drm_amdgpu_bo_list_in list{};
    list.operation = ~0u;  // an inline list, not a BO_LIST object (Mesa amdgpu_cs_submit_ib)
    list.list_handle = ~0u;
    list.bo_number = uint32_t(entries.size());
    list.bo_info_size = sizeof(drm_amdgpu_bo_list_entry);
    list.bo_info_ptr = reinterpret_cast<uint64_t>(entries.data());
    chunks.push_back({AMDGPU_CHUNK_ID_BO_HANDLES, uint32_t(sizeof list / 4), reinterpret_cast<uint64_t>(&list)});
    drm_amdgpu_cs_chunk_sem out{*syncobj};
    chunks.push_back({AMDGPU_CHUNK_ID_SYNCOBJ_OUT, uint32_t(sizeof out / 4), reinterpret_cast<uint64_t>(&out)});
    std::vector<uint64_t> chunkPointers;
    for (const drm_amdgpu_cs_chunk& c : chunks) chunkPointers.push_back(reinterpret_cast<uint64_t>(&c));
    drm_amdgpu_cs cs{};
    cs.in.ctx_id = ctx_;
    cs.in.bo_list_handle = 0;
    cs.in.num_chunks = uint32_t(chunks.size());
    cs.in.chunks = reinterpret_cast<uint64_t>(chunkPointers.data());
    const std::string what = "job " + std::to_string(job) + ": " + std::to_string(ibs.size()) + " IB(s), " + std::to_string(handles.size()) +
                             " BOs, context " + std::to_string(ctx_);
    if (kfd::Status s = drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_CS, &cs, "AMDGPU_CS", what); !s) return s.error();
    submitted_ = job;
    return job;
}

kfd::Status CsRing::wait(uint64_t job, uint32_t timeoutMs) {
    uint32_t handle;
    {
        std::lock_guard lock(mutex_);
        if (job <= retired_) return {};
        if (job > submitted_ || job + kSyncobjSlots <= submitted_)
            return kfd::plainError("SYNCOBJ_WAIT", "job " + std::to_string(job) + " is not in flight (" + std::to_string(submitted_) + " submitted)");
        handle = syncobjs_[job % kSyncobjSlots];
    }
    drm_syncobj_wait w{};
    w.handles = reinterpret_cast<uint64_t>(&handle);
    w.timeout_nsec = monotonicNs() + int64_t(timeoutMs) * 1'000'000;  // absolute, CLOCK_MONOTONIC
    w.count_handles = 1;
    w.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    int rc;
    do {
        rc = sys_.ioctl(fd_, DRM_IOCTL_SYNCOBJ_WAIT, &w);
    } while (rc == -1 && errno == EINTR);
    if (rc == -1) {
        kfd::Error e = kfd::errnoError("SYNCOBJ_WAIT", "job " + std::to_string(job) + " after " + std::to_string(timeoutMs) + " ms");
        e.message += "; " + describe();
        return e;
    }
    std::lock_guard lock(mutex_);
    retired_ = std::max(retired_, job);
    return {};
}

// AMDGPU_CTX_OP_QUERY_STATE2 (amdgpu_ctx_query2): RESET when the GPU was reset since the
// context was made, GUILTY when a job of this context caused it, VRAMLOST when VRAM contents
// were lost. A guilty context's later CS ioctls fail with ECANCELED.
std::string CsRing::resetState() {
    drm_amdgpu_ctx c{};
    c.in.op = AMDGPU_CTX_OP_QUERY_STATE2;
    c.in.ctx_id = ctx_;
    if (kfd::Status s = drmIoctl(sys_, fd_, DRM_IOCTL_AMDGPU_CTX, &c, "AMDGPU_CTX", "QUERY_STATE2 of context " + std::to_string(ctx_)); !s)
        return "the context's state is unknown: " + s.error().describe();
    const uint64_t flags = c.out.state.flags;
    if (!(flags & (AMDGPU_CTX_QUERY2_FLAGS_RESET | AMDGPU_CTX_QUERY2_FLAGS_GUILTY | AMDGPU_CTX_QUERY2_FLAGS_VRAMLOST))) return "";
    std::string state = "context " + std::to_string(ctx_) + " was reset by the kernel";
    if (flags & AMDGPU_CTX_QUERY2_FLAGS_GUILTY) state += " (guilty: its job caused the reset)";
    if (flags & AMDGPU_CTX_QUERY2_FLAGS_VRAMLOST) state += " (VRAM contents lost)";
    return state;
}

}  // namespace

kfd::Result<std::unique_ptr<kfd::KernelRing>> openCsRing(DrmSyscalls& sys, int fd, std::string renderPath,
                                                         std::function<std::vector<uint32_t>()> liveHandles) {
    auto ring = std::make_unique<CsRing>(sys, fd, std::move(renderPath), std::move(liveHandles));
    if (kfd::Status s = ring->init(); !s) return s.error();
    return std::unique_ptr<kfd::KernelRing>(std::move(ring));
}

}  // namespace zinc::umq
