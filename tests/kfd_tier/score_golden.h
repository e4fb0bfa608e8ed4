#pragma once
// `zinc-rt score` of a golden's prompt on a PM4 tier, read back as a golden, held to the reference
// by the criteria of tests/golden_check.h (an id the reference lists but the run does not rank in
// its top 10 counts as an outlier). Shared by every door: KFD queue, amdgpu user queue, CS.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/golden_check.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"

namespace zinc::test {

// Runs score with `tierArgs`; returns its output (the golden format).
inline std::string expectScoreMeetsGolden(const GoldenCase& c, const std::string& tierArgs) {
    const auto golden = readGoldenCase(c);
    std::string prompt;
    for (int32_t id : golden.prompt) prompt += (prompt.empty() ? "" : " ") + std::to_string(id);
    std::string tag = tierArgs;
    for (char& ch : tag)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    const auto out = scratchDir() / (c.golden + tag);
    const auto r = runZinc(fmt::format("{} --ctx 256 score {} --tokens \"{}\" --top 10 --greedy {} > {}", tierArgs,
                                       sharedPath("models/" + golden.modelFile), prompt, golden.greedy.size(), out.string()));
    EXPECT_EQ(r.exitCode, 0) << tierArgs << ": " << r.output;
    if (r.exitCode != 0) return "";
    const auto got = readGolden(out.string());
    EXPECT_EQ(got.positions.size(), golden.positions.size()) << tierArgs;
    if (got.positions.size() != golden.positions.size()) return "";
    const auto& [absolute, relative, allowedPositions, top1Gap] = c.tolerance;
    int outlierPositions = 0;
    for (size_t i = 0; i < golden.positions.size(); ++i) {
        const auto& want = golden.positions[i].top;
        const auto& have = got.positions[i].top;
        if (want.size() >= 2 && want[0].second - want[1].second > top1Gap) {
            EXPECT_EQ(have[0].first, want[0].first) << tierArgs << ": top-1 differs at pos " << i;
        }
        std::string misses;
        for (const auto& [id, value] : want) {
            const auto it = std::find_if(have.begin(), have.end(), [&](const auto& p) { return p.first == id; });
            if (it == have.end() || std::fabs(it->second - value) > absolute + relative * std::fabs(value))
                misses += " id " + std::to_string(id) + " (reference " + std::to_string(value) + ")";
        }
        if (!misses.empty()) {
            ++outlierPositions;
            EXPECT_LE(outlierPositions, allowedPositions) << tierArgs << ": pos " << i << ":" << misses;
        }
    }
    if (c.greedyMustMatch) {
        EXPECT_EQ(got.greedy, golden.greedy) << tierArgs;
    }
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace zinc::test
