// `--device` on the PM4 tiers, through the binary: the mapping `devices` prints and the node a
// run opens, on a simulated machine of two GPU nodes (--sim --sim-nodes 2).
#include <gtest/gtest.h>

#include "tests/cli/run_zinc.h"

namespace zinc::test {
namespace {


TEST(Devices, ListsTheSimulatedNodesWithTheirBar) {
    const auto r = runZinc("--sim --sim-nodes 2 --sim-bar-mib 256 --device 1 devices");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("  device 0: KFD node 1, /dev/dri/renderD128, gfx1100, VRAM 24.0 GiB, BAR 256 MiB "
                            "(smaller than VRAM: weights and KV go through a GTT staging copy), simulated\n"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("  device 1: KFD node 2, /dev/dri/renderD129, gfx1100, VRAM 24.0 GiB, BAR 256 MiB "
                            "(smaller than VRAM: weights and KV go through a GTT staging copy), simulated  <- --device\n"),
              std::string::npos)
        << r.output;
}

TEST(Devices, DeviceOnePicksTheSecondSimulatedNode) {
    const auto r = runZinc("--tier=kfd --sim --sim-exec isa --sim-nodes 2 --device 1 run -n 1 --temp 0 " + sharedModel("stories260K.gguf"));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("tier: kfd: simulated gfx1100 node 2 "), std::string::npos) << r.output;
}

TEST(Devices, DeviceBeyondTheListNamesWhatThereIs) {
    const auto r = runZinc("--tier=umq --sim --device 2 run -n 1 " + sharedModel("stories260K.gguf"));
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find("zinc-rt: error: umq tier: --device 2: there are 1 GPU(s):\n"
                            "  device 0: KFD node 1, /dev/dri/renderD128, gfx1100, VRAM 24.0 GiB, BAR 24.0 GiB (all VRAM), simulated\n"),
              std::string::npos)
        << r.output;
}

}  // namespace
}  // namespace zinc::test
