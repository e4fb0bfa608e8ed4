#pragma once
// One PoCL runner per test binary for the simulated GPUs it opens (PoCL builds the kernel
// program once per runner, which takes seconds), made only when kernels run on PoCL
// (ZINC_SIM_EXEC=pocl): the ISA interpreter, the default, needs none.
#include <memory>

#include "kernels/pocl_runner.h"
#include "kfd/sim/sim_dispatch.h"

namespace zinc::test {

inline std::shared_ptr<kernels::PoclRunner> sharedPoclRunner() {
    if (kfd::simExecFromEnvironment() != kfd::SimExec::Pocl) return nullptr;
    static auto runner = std::make_shared<kernels::PoclRunner>();
    return runner;
}

}  // namespace zinc::test
