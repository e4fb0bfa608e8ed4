#pragma once
// What the cli tests add to tests/run_zinc.h: a run with environment assignments, and the one
// error line of a run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/run_zinc.h"

namespace zinc::test {

// `env` is "NAME=VALUE" (or empty), set for this run only.
inline RunResult runZincCli(const std::string& args, const std::string& stdinText = "", const std::string& env = "") {
    const size_t eq = env.find('=');
    const std::string name = eq == std::string::npos ? "" : env.substr(0, eq);
    if (!name.empty()) ::setenv(name.c_str(), env.substr(eq + 1).c_str(), 1);
    RunResult r = runZinc(args, stdinText);
    if (!name.empty()) ::unsetenv(name.c_str());
    return r;
}

// The one line starting "zinc-rt: error: " (fails the test when there is not exactly one).
inline std::string cliErrorLine(const RunResult& r) {
    std::vector<std::string> lines;
    for (size_t at = 0; (at = r.output.find("zinc-rt: error: ", at)) != std::string::npos; at += 1)
        lines.push_back(r.output.substr(at, r.output.find('\n', at) - at));
    EXPECT_EQ(lines.size(), 1u) << r.output;
    return lines.empty() ? "" : lines[0];
}

}  // namespace zinc::test
