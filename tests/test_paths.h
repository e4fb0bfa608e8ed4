#pragma once
// Where tests find ../shared (models, goldens) and the built zinc-rt binary. meson passes
// ZINC_SHARED and ZINC_RT in the test environment; the fallbacks serve a manual run from the
// build folder.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace zinc::test {

inline std::string sharedPath(const std::string& relative) {
    const char* root = std::getenv("ZINC_SHARED");
    std::filesystem::path base = root ? root : "../../shared";
    return (base / relative).string();
}

// A model file of ../shared/models.
inline std::string sharedModel(const std::string& file) { return sharedPath("models/" + file); }

inline std::string zincRtBinary() {
    const char* bin = std::getenv("ZINC_RT");
    return bin ? bin : "./tools/zinc-rt";
}

// A scratch folder unique to this test process, removed by the OS's tmp cleaning.
inline std::filesystem::path scratchDir() {
    auto dir = std::filesystem::temp_directory_path() / ("zinc-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace zinc::test
