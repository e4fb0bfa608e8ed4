#pragma once
// kfd::Device: the few verbs a PM4 direct-submission tier needs from a GPU (after tinygrad's
// KFDIface): memory, a compute queue with a doorbell, events, and the queue's state for error
// reports. Three doors implement it — Linux /dev/kfd (kfd/linux/), an amdgpu render node (umq/)
// and the simulated GPU (kfd/sim/) — and nothing above this interface knows which one it has
// (STYLE.md §5).
//
// Pointer conventions, the ones the hardware uses for a PM4 queue on gfx9+ (kfdtest PM4Queue,
// FACTS.md §5.4): wptr is a 64-bit count of dwords ever written, increasing monotonically; the
// ring slot is wptr % ringDwords. rptr is written by the CP as a 32-bit dword offset that wraps at
// the ring size. The doorbell takes the same 64-bit wptr value.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kfd/device/caps.h"
#include "kfd/device/result.h"

namespace zinc::kernels {
class CodeObject;
struct KernelInfo;
}  // namespace zinc::kernels

namespace zinc::kfd {

class KernelRing;

enum class MemoryKind : uint8_t {
    Vram,      // device-local; CPU-visible here (PUBLIC) so the host can fill it
    Gtt,       // system memory the GPU reaches over PCIe
    Doorbell,  // the process doorbell frame (written by the CPU, read by the CP)
};
std::string_view memoryKindName(MemoryKind kind);

struct AllocOptions {
    bool executable = false;  // code objects (KFD EXECUTABLE)
    bool uncached = false;    // rings, queue pointers, signals: GTT|COHERENT|UNCACHED (tinygrad's choice)
    bool readOnly = false;    // GPU cannot write (no KFD WRITABLE)
    // VRAM only: the CPU maps it (KFD PUBLIC). false: VRAM outside the CPU-visible window (the
    // BAR, GpuCaps::cpuVisibleVramBytes); such memory has no cpuPtr and is filled by the GPU.
    bool hostAccess = true;
};

// One allocation, mapped for the GPU at gpuVa and for the CPU at cpuPtr (null for VRAM
// allocated without hostAccess).
struct Memory {
    uint64_t gpuVa = 0;
    void* cpuPtr = nullptr;
    uint64_t size = 0;
    MemoryKind kind = MemoryKind::Gtt;
    uint64_t handle = 0;  // KFD buffer handle; the simulator's allocation id

    explicit operator bool() const { return size != 0; }
    template <class T> T* as(uint64_t byteOffset = 0) const {
        return reinterpret_cast<T*>(static_cast<char*>(cpuPtr) + byteOffset);
    }
    uint64_t gpuAddress(uint64_t byteOffset) const { return gpuVa + byteOffset; }
};

struct QueueOptions {
    uint32_t ringBytes = 64 * 1024;  // power of two, >= 4096: KFD wants a mapping of exactly this size
    uint32_t priority = 7;           // 0..15 (KFD_MAX_QUEUE_PRIORITY); tinygrad uses 7
    uint32_t percentage = 100;       // 0..100; 0 makes the queue inactive
};

// A PM4 compute queue. Plain data: the device keeps its own state keyed by id.
struct Queue {
    uint32_t id = 0;
    Memory ring;       // ringBytes of PM4 dwords
    Memory pointers;   // one page holding rptr and wptr (KFD wants each inside a 1-page mapping)
    Memory eop;        // end-of-pipe buffer, topology eop_buffer_size
    Memory ctxSave;    // context save/restore area (CWSR) incl. control stack and debug memory
    uint64_t doorbellOffset = 0;          // CREATE_QUEUE's mmap offset (Linux); 0 on the simulator
    volatile uint64_t* doorbell = nullptr;  // this queue's 8-byte doorbell

    static constexpr uint64_t kRptrOffset = 0x00;  // in `pointers`
    static constexpr uint64_t kWptrOffset = 0x08;

    uint32_t ringDwords() const { return uint32_t(ring.size / 4); }
    uint32_t* ringData() const { return ring.as<uint32_t>(); }
    volatile uint32_t* rptr() const { return pointers.as<volatile uint32_t>(kRptrOffset); }
    volatile uint64_t* wptr() const { return pointers.as<volatile uint64_t>(kWptrOffset); }
};

// A KFD signal event. The GPU signals it with RELEASE_MEM (INT_SEL interrupt after write
// confirm, DATA = event id into `mailboxGpuVa`, INT_CTXID = event id) (FACTS.md §5.7).
struct Event {
    uint32_t id = 0;
    uint32_t slot = 0;             // mailbox index in the event page
    uint64_t mailboxGpuVa = 0;     // 8-byte mailbox the signalling RELEASE_MEM writes
    volatile uint64_t* mailbox = nullptr;
    bool autoReset = true;
};

// A GPU fault as the command processor reports it: where in the ring, which packet, why.
struct QueueFault {
    uint64_t dwordOffset = 0;        // ring dword offset of the faulting packet's header
    uint32_t header = 0;
    std::string packet;              // "WAIT_REG_MEM", "unknown opcode 0x99", ...
    std::string reason;              // "read of 4 bytes at 0xdead0000: not mapped", ...
    std::optional<uint64_t> address; // the faulting address, for memory faults
    std::string decoded;             // the packet decoded field by field, when it could be read
};

// Tests on the simulated GPU (`ZINC_SIM_FAULT`, kfd/sim/sim_faults.h): one fault the GPU is to
// make, once. The tier aims it (it knows where its plan's ops and its fence are); only the
// simulated doors take it (Device::injectFault), hardware makes its own.
struct InjectedFault {
    enum class Kind : uint8_t { PageFault, Hang, BadFence };
    Kind kind = Kind::PageFault;
    // PageFault: the dispatch whose kernarg segment is at this address finds its kernarg pointer
    // pointing at unmapped memory (the dispatcher's own check faults the queue).
    uint64_t kernargAddress = 0;
    // Hang: the CP stops before the packet at this address and never goes on (until the queue
    // is destroyed or the ring reset).
    uint64_t packetAddress = 0;
    // PageFault and Hang: only while the 32-bit word at whenAddress holds whenValue (the token
    // state's position: the fault hits the chosen token, not the first to run the op). 0: always.
    uint64_t whenAddress = 0;
    uint32_t whenValue = 0;
    // BadFence: the RELEASE_MEM that writes fenceValue at fenceAddress writes a wrong value.
    uint64_t fenceAddress = 0, fenceValue = 0;
};
std::string_view injectedFaultName(InjectedFault::Kind kind);  // "fault", "hang", "fence"

struct FenceRecord {
    uint64_t address = 0;  // where the last RELEASE_MEM wrote
    uint64_t value = 0;
};

// Everything that explains a queue when a wait fails (STYLE.md §6: "a hung fence reports rptr,
// wptr, the fence memory and the last packet").
struct QueueState {
    uint32_t queueId = 0;
    uint32_t rptr = 0;             // as the CP last wrote it: ring dword offset
    uint64_t wptr = 0;             // monotonic dword count
    uint32_t ringDwords = 0;
    uint64_t doorbell = 0;         // last value written to the doorbell, when it can be read
    std::vector<uint32_t> packetAtRptr;  // the packet the CP is on (header + body, clipped)
    std::string packetName;              // its decoded name
    std::optional<FenceRecord> lastFence;  // simulator: the last RELEASE_MEM it retired
    std::optional<QueueFault> fault;
    // Simulator: the packet the CP is on inside an IB the ring called (rptr only shows the
    // INDIRECT_BUFFER packet); the kfd tier maps it to the op of its plan.
    struct IbPosition {
        uint32_t depth = 0;
        uint64_t packetAddress = 0;
    };
    std::optional<IbPosition> insideIb;

    uint32_t pendingDwords() const { return ringDwords ? uint32_t((wptr % ringDwords + ringDwords - rptr) % ringDwords) : 0; }
    std::string describe() const;
};

// A code object copied into executable GPU memory, its segments at their virtual addresses.
struct LoadedKernel {
    const kernels::KernelInfo* info = nullptr;
    uint64_t descriptorAddress = 0;  // NAME.kd
    uint64_t entryAddress = 0;       // 256-byte aligned; COMPUTE_PGM_LO/HI = entryAddress >> 8
};
struct LoadedCodeObject {
    Memory image;
    std::shared_ptr<const kernels::CodeObject> object;

    // The kernel of that name, with its addresses in this image; an error naming what is loaded.
    Result<LoadedKernel> kernel(std::string_view name) const;
};

class Device {
public:
    virtual ~Device() = default;
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    // "linux /dev/kfd node 1 (gpu_id 0x1234)", "simulated gfx1100".
    virtual std::string name() const = 0;
    virtual const GpuCaps& caps() const = 0;

    // Allocates, maps for the GPU and maps for the CPU. Size is rounded up to 4 KiB.
    virtual Result<Memory> allocMemory(uint64_t size, MemoryKind kind, AllocOptions options = {}) = 0;
    virtual Status freeMemory(Memory& memory) = 0;

    // A PM4 compute queue with every buffer KFD checks, sized from caps().queueBuffers.
    virtual Result<Queue> createQueue(const QueueOptions& options = {}) = 0;
    virtual Status destroyQueue(Queue& queue) = 0;

    // Publishes wptr and rings the doorbell, in the order hardware requires: the packet body is
    // visible before wptr, wptr before the doorbell (ROCR / kfdtest PM4Queue::SubmitPacket).
    void ringDoorbell(const Queue& queue, uint64_t wptr);

    virtual Result<Event> createEvent(bool autoReset = true) = 0;
    virtual Status destroyEvent(Event& event) = 0;
    virtual Status setEvent(const Event& event) = 0;  // CPU-side signal
    // Waits until one (or all) of `events` is signalled. Never unbounded: on timeout the error
    // (errno ETIME) carries the state of every queue; a GPU fault ends the wait with the fault.
    virtual Status waitEvents(std::span<const Event> events, uint32_t timeoutMs, bool waitAll = false) = 0;

    virtual QueueState readQueueState(const Queue& queue) const = 0;

    // Copies the object's loadable segments into executable VRAM. The simulated GPU also
    // registers its kernels, so a DISPATCH_DIRECT at one of their entries finds it.
    virtual Result<LoadedCodeObject> loadCodeObject(std::shared_ptr<const kernels::CodeObject> object);
    virtual Status unloadCodeObject(LoadedCodeObject& loaded);

    // The kernel's compute ring behind a submit ioctl (kfd/kernel_ring.h), for devices that have
    // one (amdgpu render nodes, umq/); KFD has none, so by default an error saying so.
    virtual Result<std::unique_ptr<KernelRing>> openKernelRing();

    // Tests: arms one fault on the simulated GPU (kfd/sim/sim_faults.h). Hardware doors refuse.
    virtual Status injectFault(const InjectedFault& fault);

protected:
    Device() = default;
    // Called after the doorbell store; the simulator wakes its command processor here.
    virtual void doorbellRung(const Queue& queue) = 0;
};

// Helpers shared by every implementation.
// The packet name at ring offset `rptr` and its dwords (clipped to what the header claims).
void fillPacketAtRptr(const Queue& queue, QueueState& state);
// The error a timed-out wait reports: what was waited for, then each queue's state.
Error waitTimeoutError(std::string waitedFor, uint32_t timeoutMs, std::span<const QueueState> queues);

}  // namespace zinc::kfd
