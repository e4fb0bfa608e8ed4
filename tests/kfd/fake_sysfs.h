#pragma once
// A KFD sysfs topology tree written into a temporary directory, for tests that must not depend
// on the machine they run on.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace zinc::kfd::testing {
namespace fs = std::filesystem;

// A temporary directory removed with the test.
class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "zinc-kfd-XXXXXX").string();
        path_ = ::mkdtemp(pattern.data()) ? pattern : "";
    }
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

inline void writeFile(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

// Properties as a Radeon RX 7900 XTX (Navi 31) shows them: 96 CUs = 192 SIMDs / 2.
inline constexpr const char* kGpuProperties =
    "cpu_cores_count 0\n"
    "simd_count 192\n"
    "mem_banks_count 1\n"
    "caches_count 206\n"
    "io_links_count 1\n"
    "max_waves_per_simd 16\n"
    "lds_size_in_kb 64\n"
    "gds_size_in_kb 0\n"
    "wave_front_size 32\n"
    "array_count 12\n"
    "simd_arrays_per_engine 2\n"
    "cu_per_simd_array 8\n"
    "simd_per_cu 2\n"
    "max_slots_scratch_cu 32\n"
    "gfx_target_version 110000\n"
    "vendor_id 4098\n"
    "device_id 29772\n"
    "location_id 768\n"
    "drm_render_minor 128\n"
    "num_sdma_engines 2\n"
    "num_cp_queues 8\n"
    "local_mem_size 0\n"
    "num_xcc 1\n";

inline void writeFakeTopology(const fs::path& root) {
    writeFile(root / "generation_id", "1\n");
    writeFile(root / "nodes/0/gpu_id", "0\n");
    writeFile(root / "nodes/0/name", "\n");
    writeFile(root / "nodes/0/properties", "cpu_cores_count 16\nsimd_count 0\nmem_banks_count 1\n");
    writeFile(root / "nodes/0/mem_banks/0/properties", "heap_type 0\nsize_in_bytes 67108864000\n");
    writeFile(root / "nodes/1/gpu_id", "45778\n");
    writeFile(root / "nodes/1/name", "gfx1100\n");
    writeFile(root / "nodes/1/properties", kGpuProperties);
    writeFile(root / "nodes/1/mem_banks/0/properties", "heap_type 1\nsize_in_bytes 25753026560\nflags 0\nwidth 384\n");
}

}  // namespace zinc::kfd::testing
