#include "kfd/tier/gpu_failure.h"

namespace zinc::kfd {

GpuFailure classifyGpuFailure(std::string_view error, const std::optional<QueueState>& state) {
    const auto says = [&](std::string_view words) { return error.find(words) != std::string_view::npos; };
    GpuFailure f;
    f.vramLost = says("VRAM lost") || says("VRAM contents lost");  // KFD memory_lost, amdgpu VRAMLOST
    if (says("bad fence")) {  // Submitter::checkFence, or a queue that ran dry short of its fence
        f.kind = "bad fence";
        f.cpPositionMeans = false;  // the fence is written after the plan: the CP is past it
        return f;
    }
    const bool fault = (state && state->fault) || says("GPU memory fault");             // the simulator, KFD's memory exception
    const bool reset = says("reset by the kernel") || says("GPU hardware exception");  // amdgpu CTX QUERY_STATE2, KFD's HW exception
    f.kind = fault ? "GPU fault" : reset ? "GPU reset" : "GPU hang";
    // A fault may have left the plans' memory in any state; a hang did not.
    f.replan = fault || reset;
    return f;
}

}  // namespace zinc::kfd
