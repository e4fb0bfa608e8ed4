#pragma once
// The PM4 tiers by door (tiers.md): `kfd` = the PM4 tier on a KFD queue + doorbell
// (--submit=doorbell) or on the amdgpu CS ioctl (--submit=cs); `umq` = the same PM4 tier on an
// amdgpu user-mode queue + doorbell. And `--tier=auto`: the best tier this machine opens.
// Nothing here falls back: a door that is shut is an error that says why.
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kfd/device/device.h"
#include "kfd/device/gpu_list.h"
#include "kfd/tier/pm4_tier.h"
#include "runtime/tier.h"
#include "tools/cli_common.h"
#include "umq/availability.h"

namespace zinc::tools {

// The PM4 tier's options from the command line: dump folder, wait bound, route, stop tokens.
kfd::Pm4TierOptions pm4TierOptions(const std::string& name, const runtime::TierOptions& options, const GlobalOptions& global);

// kfd with --submit=doorbell|cs, or umq; throws TierError with the one-line reason.
std::unique_ptr<runtime::Tier> makePm4Tier(const std::string& name, const graph::Graph& graph, const runtime::TierOptions& options,
                                           const GlobalOptions& global);

// The GPUs --device chooses among (kfd/device/gpu_list.h): with --sim the --sim-nodes simulated
// ones (KFD nodes 1.., render nodes renderD128..), else this machine's KFD nodes and amdgpu
// render nodes.
std::vector<kfd::GpuEntry> listGpus(const GlobalOptions& global);
// The entry --device names; throws TierError listing the GPUs when there is none such, or when
// it is an integrated GPU that --device did not name explicitly.
kfd::GpuEntry chosenGpu(const GlobalOptions& global, const std::string& tierLabel);

// The KFD door: the simulated GPU of --gfx with --sim, else /dev/kfd; the node --device picks.
std::shared_ptr<kfd::Device> openKfdNode(const GlobalOptions& global);

// The amdgpu render node for `tierLabel` ("umq tier", "kfd tier (--submit=cs)"): the simulated
// one with --sim, else the render node --device picks; with `userQueues` it must offer compute user queues.
std::shared_ptr<kfd::Device> openAmdgpuNode(const GlobalOptions& global, const std::string& tierLabel, bool userQueues);

// The three doors as `devices` and `probe` both report them: with --sim each opens on the
// simulated GPU; else what the host offers (render nodes, USERQ support, /dev/kfd).
struct Doors {
    umq::DoorReport umq, cs, kfd;
};
Doors doorsFor(const GlobalOptions& global, const umq::HostFacts& host);

struct AutoChoice {
    std::string tier;                      // cpu | vulkan | kfd | umq
    std::string why;
    std::vector<std::string> unavailable;  // "umq unavailable: reason", best first
    int32_t vulkanDevice = 0;
    std::shared_ptr<kfd::Device> device;   // the PM4 device already opened while choosing
};
// umq > kfd > vulkan (a GPU, not a CPU driver such as lavapipe) > cpu, by what opens here.
// Never the simulator unless --sim is given; with --sim: the kfd tier on the simulated GPU.
AutoChoice chooseAutoTier(const GlobalOptions& global);
// "tier auto: chose cpu (...; umq unavailable: ...; kfd unavailable: ...)".
std::string describe(const AutoChoice& choice);

}  // namespace zinc::tools
