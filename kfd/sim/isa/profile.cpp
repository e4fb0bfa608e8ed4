#include "kfd/sim/isa/profile.h"

#include <atomic>

namespace zinc::kfd::isa {
namespace {
std::atomic<Profile*> installed{nullptr};
}

const char* opClassName(OpClass c) {
    static const char* names[kOpClasses] = {"VALU", "SALU", "VMEM", "SMEM", "LDS", "branch", "other", "VALU64"};
    return names[size_t(c)];
}

OpClass classify(const std::string& m) {
    auto starts = [&](const char* p) { return m.rfind(p, 0) == 0; };
    if (starts("s_branch") || starts("s_cbranch") || starts("s_setpc") || starts("s_swappc") || starts("s_getpc")) return OpClass::Branch;
    if (starts("s_load") || starts("s_buffer_load")) return OpClass::Smem;
    if (starts("s_nop") || starts("s_wait") || starts("s_delay_alu") || starts("s_clause") || starts("s_sendmsg") ||
        starts("s_barrier") || starts("s_endpgm") || starts("s_set_inst") || starts("s_code_end"))
        return OpClass::Other;
    if (starts("s_")) return OpClass::Salu;
    if (starts("v_")) return m.find("_f64") != std::string::npos ? OpClass::Valu64 : OpClass::Valu;
    if (starts("ds_")) return OpClass::Lds;
    if (starts("global_") || starts("buffer_") || starts("flat_") || starts("scratch_")) return OpClass::Vmem;
    return OpClass::Other;
}

void Profile::add(const std::string& kernel, const KernelProfile& p) {
    std::lock_guard lock(mutex_);
    KernelProfile& k = kernels_[kernel];
    k.dispatches += p.dispatches;
    k.waves += p.waves;
    k.bytesRead += p.bytesRead;
    k.bytesWritten += p.bytesWritten;
    for (size_t i = 0; i < kOpClasses; ++i) k.instructions[i] += p.instructions[i];
    k.hostSeconds += p.hostSeconds;
}

std::map<std::string, KernelProfile> Profile::snapshot() const {
    std::lock_guard lock(mutex_);
    return kernels_;
}

void setProfile(Profile* profile) { installed.store(profile); }
Profile* currentProfile() { return installed.load(); }

}  // namespace zinc::kfd::isa
