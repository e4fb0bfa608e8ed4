#pragma once
// KFD topology as sysfs shows it: <root>/nodes/<n>/{gpu_id, name, properties, mem_banks/<m>/
// properties}, each properties file "name value" per line (kfd_topology.c node_show / mem_show;
// FACTS.md §7). The root is a parameter so tests can point it at a tree they write themselves.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kfd/device/caps.h"
#include "kfd/device/result.h"

namespace zinc::kfd {

// Where KFD publishes topology (also reachable as /sys/devices/virtual/kfd/kfd/topology).
inline constexpr const char* kDefaultTopologyRoot = "/sys/class/kfd/kfd/topology";

struct TopologyNode {
    uint32_t index = 0;   // the directory number under nodes/
    uint32_t gpuId = 0;   // 0 for a CPU-only node
    std::string name;     // the "name" file (e.g. "gfx1100" or the CPU's name), may be empty
    std::map<std::string, uint64_t> properties;
    uint64_t localMemoryBytes = 0;  // sum of mem_banks with a frame-buffer heap type

    bool isGpu() const { return gpuId != 0; }
    // A property, or `fallback` when this kernel does not export it.
    uint64_t property(const std::string& key, uint64_t fallback = 0) const;
};

struct Topology {
    std::string root;
    std::vector<TopologyNode> nodes;  // sorted by index

    std::vector<const TopologyNode*> gpus() const;
};

// Reads every node under root/nodes. An error names the file that could not be read or parsed;
// a missing nodes/ directory is an error with errno ENOENT.
Result<Topology> readTopology(const std::string& root = kDefaultTopologyRoot);

// Parses one properties file's text ("name value" lines); the error names `source` and the line.
Result<std::map<std::string, uint64_t>> parseProperties(const std::string& text, const std::string& source);

// GpuCaps from a GPU node: name from gfx_target_version, CUs = simd_count / simd_per_cu, LDS from
// lds_size_in_kb, VRAM from the mem banks, queue-buffer sizes from the node's own cwsr_size /
// ctl_stack_size when the kernel exports them (8fc2796dea6f) and KFD's formula otherwise.
Result<GpuCaps> capsFromTopologyNode(const TopologyNode& node);

}  // namespace zinc::kfd
