#include "kfd/sim/sim_faults.h"

#include <cerrno>
#include <cstring>

#include "kfd/sim/sim_memory.h"

namespace zinc::kfd {

Status SimFaults::arm(const InjectedFault& fault) {
    using K = InjectedFault::Kind;
    if ((fault.kind == K::PageFault && !fault.kernargAddress) || (fault.kind == K::Hang && !fault.packetAddress) ||
        (fault.kind == K::BadFence && !fault.fenceAddress))
        return Error{"inject fault", EINVAL, std::string("a ") + std::string(injectedFaultName(fault.kind)) + " needs the address it is aimed at"};
    std::lock_guard lock(mutex_);
    armed_ = fault;
    return {};
}

bool SimFaults::when(const InjectedFault& f, const SimMemory& memory) const {
    if (!f.whenAddress) return true;
    uint8_t bytes[4];
    if (!memory.readBytes(f.whenAddress, bytes)) return false;
    uint32_t word;
    std::memcpy(&word, bytes, 4);
    return word == f.whenValue;
}

std::optional<uint64_t> SimFaults::faultKernarg(uint64_t kernargAddress, const SimMemory& memory) {
    std::lock_guard lock(mutex_);
    if (!armed_ || armed_->kind != InjectedFault::Kind::PageFault || armed_->kernargAddress != kernargAddress || !when(*armed_, memory))
        return std::nullopt;
    armed_.reset();
    return kUnmappedVa;
}

bool SimFaults::hangBefore(uint64_t packetAddress, const SimMemory& memory) {
    std::lock_guard lock(mutex_);
    if (!armed_ || armed_->kind != InjectedFault::Kind::Hang || armed_->packetAddress != packetAddress || !when(*armed_, memory)) return false;
    armed_.reset();
    return true;
}

std::optional<uint64_t> SimFaults::fenceValue(uint64_t address, uint64_t value) {
    std::lock_guard lock(mutex_);
    if (!armed_ || armed_->kind != InjectedFault::Kind::BadFence || armed_->fenceAddress != address || armed_->fenceValue != value)
        return std::nullopt;
    armed_.reset();
    // High bits no timeline reaches: the host sees a fence past everything it submitted.
    return value | 0xBAD0000000000000ull;
}

}  // namespace zinc::kfd
