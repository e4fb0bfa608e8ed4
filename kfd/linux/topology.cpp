#include "kfd/linux/topology.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace zinc::kfd {
namespace fs = std::filesystem;
namespace {

// Heap types of a mem bank (kfd_crat.h HSA_MEM_HEAP_TYPE_*): 1 FB_PUBLIC and 2 FB_PRIVATE are
// the GPU's local memory; 0 is system memory.
constexpr uint64_t kHeapFbPublic = 1, kHeapFbPrivate = 2;

Result<std::string> readText(const fs::path& path) {
    std::ifstream in(path);
    if (!in) return errnoError("read topology", "cannot open " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    return s;
}

// Directory entries that are plain numbers, sorted numerically.
std::vector<uint32_t> numberedEntries(const fs::path& dir) {
    std::vector<uint32_t> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        uint32_t n = 0;
        auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), n);
        if (err == std::errc() && end == name.data() + name.size()) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
}

Result<uint64_t> localMemory(const fs::path& nodeDir) {
    uint64_t total = 0;
    const fs::path banks = nodeDir / "mem_banks";
    for (uint32_t bank : numberedEntries(banks)) {
        const fs::path file = banks / std::to_string(bank) / "properties";
        Result<std::string> text = readText(file);
        if (!text) return text.error();
        auto props = parseProperties(*text, file.string());
        if (!props) return props.error();
        const auto heap = props->find("heap_type");
        const auto size = props->find("size_in_bytes");
        if (heap != props->end() && size != props->end() &&
            (heap->second == kHeapFbPublic || heap->second == kHeapFbPrivate))
            total += size->second;
    }
    return total;
}

Result<TopologyNode> readNode(const fs::path& nodesDir, uint32_t index) {
    const fs::path dir = nodesDir / std::to_string(index);
    TopologyNode node;
    node.index = index;
    Result<std::string> gpuId = readText(dir / "gpu_id");
    if (!gpuId) return gpuId.error();
    auto parsed = parseProperties("gpu_id " + trim(*gpuId), (dir / "gpu_id").string());
    if (!parsed) return parsed.error();
    node.gpuId = uint32_t(parsed->at("gpu_id"));
    if (Result<std::string> name = readText(dir / "name")) node.name = trim(*name);  // optional
    Result<std::string> props = readText(dir / "properties");
    if (!props) return props.error();
    auto map = parseProperties(*props, (dir / "properties").string());
    if (!map) return map.error();
    node.properties = std::move(*map);
    Result<uint64_t> mem = localMemory(dir);
    if (!mem) return mem.error();
    node.localMemoryBytes = *mem;
    return node;
}

}  // namespace

uint64_t TopologyNode::property(const std::string& key, uint64_t fallback) const {
    const auto it = properties.find(key);
    return it == properties.end() ? fallback : it->second;
}

std::vector<const TopologyNode*> Topology::gpus() const {
    std::vector<const TopologyNode*> out;
    for (const TopologyNode& n : nodes)
        if (n.isGpu()) out.push_back(&n);
    return out;
}

Result<std::map<std::string, uint64_t>> parseProperties(const std::string& text, const std::string& source) {
    std::map<std::string, uint64_t> out;
    std::istringstream lines(text);
    std::string line;
    for (int lineNo = 1; std::getline(lines, line); ++lineNo) {
        std::istringstream words(line);
        std::string key, value, extra;
        if (!(words >> key)) continue;  // blank line
        if (!(words >> value) || (words >> extra))
            return plainError("read topology", source + ":" + std::to_string(lineNo) + ": expected 'name value', got '" + line + "'");
        uint64_t v = 0;
        auto [end, err] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (err != std::errc() || end != value.data() + value.size())
            return plainError("read topology", source + ":" + std::to_string(lineNo) + ": '" + key + "' has a non-numeric value '" + value + "'");
        out[key] = v;
    }
    return out;
}

Result<Topology> readTopology(const std::string& root) {
    Topology topo;
    topo.root = root;
    const fs::path nodesDir = fs::path(root) / "nodes";
    std::error_code ec;
    if (!fs::is_directory(nodesDir, ec))
        return Error{"read topology", ENOENT, "no " + nodesDir.string() + " (is the amdgpu driver with KFD loaded?)"};
    for (uint32_t index : numberedEntries(nodesDir)) {
        Result<TopologyNode> node = readNode(nodesDir, index);
        if (!node) return node.error();
        topo.nodes.push_back(std::move(*node));
    }
    return topo;
}

Result<GpuCaps> capsFromTopologyNode(const TopologyNode& node) {
    const std::string where = "topology node " + std::to_string(node.index);
    if (!node.isGpu()) return plainError("caps", where + " is a CPU node (gpu_id 0)");
    GpuCaps caps;
    caps.nodeIndex = node.index;
    caps.gpuId = node.gpuId;
    caps.gfxTargetVersion = uint32_t(node.property("gfx_target_version"));
    if (caps.gfxTargetVersion == 0) return plainError("caps", where + " has no gfx_target_version");
    caps.numXcc = uint32_t(node.property("num_xcc", 1));  // absent before multi-XCC parts: 1
    caps.simdPerCu = uint32_t(node.property("simd_per_cu"));
    const uint64_t simds = node.property("simd_count");
    if (caps.simdPerCu == 0 || simds == 0) return plainError("caps", where + " reports no SIMDs (simd_count/simd_per_cu)");
    caps.computeUnits = uint32_t(simds / caps.simdPerCu);
    caps.maxWavesPerSimd = uint32_t(node.property("max_waves_per_simd"));
    caps.ldsBytes = uint32_t(node.property("lds_size_in_kb") * 1024);
    caps.drmRenderMinor = uint32_t(node.property("drm_render_minor"));
    // local_mem_size is reported as 0 by current kernels (FACTS.md §7); the banks carry the size.
    caps.vramBytes = node.localMemoryBytes ? node.localMemoryBytes : node.property("local_mem_size");
    if (Status s = applyGenerationTraits(caps); !s) return Error{s.error().operation, 0, where + ": " + s.error().message};
    // Prefer what the kernel itself says it will check against (exported since 8fc2796dea6f).
    if (uint64_t ctl = node.property("ctl_stack_size")) caps.queueBuffers.ctlStackBytes = uint32_t(ctl);
    if (uint64_t cwsr = node.property("cwsr_size")) caps.queueBuffers.ctxSaveBytes = uint32_t(cwsr);
    if (node.properties.count("ctl_stack_size") || node.properties.count("cwsr_size")) {
        const QueueBufferSizes& q = caps.queueBuffers;
        caps.queueBuffers.ctxSaveMappingBytes =
            ((uint64_t(q.ctxSaveBytes) + q.debugMemoryBytes) * caps.numXcc + 4095) & ~uint64_t(4095);
    }
    return caps;
}

}  // namespace zinc::kfd
