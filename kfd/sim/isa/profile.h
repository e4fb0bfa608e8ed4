#pragma once
// What the interpreter counts per kernel while a profile is installed (zinc-rt kernels): dynamic
// wave-instructions by class, bytes moved, dispatches and the host time the interpreter took.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace zinc::kfd::isa {

// Valu64: VALU on f64 operands (`v_*_f64`), which RDNA consumer parts run at a fraction of the rate.
enum class OpClass : uint8_t { Valu, Salu, Vmem, Smem, Lds, Branch, Other, Valu64 };
inline constexpr size_t kOpClasses = 8;
const char* opClassName(OpClass c);
OpClass classify(const std::string& mnemonic);  // from the mnemonic's prefix

struct KernelProfile {
    uint64_t dispatches = 0, waves = 0, bytesRead = 0, bytesWritten = 0;
    std::array<uint64_t, kOpClasses> instructions{};  // wave-instructions per OpClass
    double hostSeconds = 0;
    uint64_t total() const {
        uint64_t t = 0;
        for (uint64_t n : instructions) t += n;
        return t;
    }
};

class Profile {
public:
    void add(const std::string& kernel, const KernelProfile& p);
    std::map<std::string, KernelProfile> snapshot() const;

private:
    mutable std::mutex mutex_;
    std::map<std::string, KernelProfile> kernels_;
};

// Installs `profile` (or null) for every launch in the process until replaced.
void setProfile(Profile* profile);
Profile* currentProfile();

}  // namespace zinc::kfd::isa
