#pragma once
// Runs the zinc-rt binary as a user would, for the cli tests: stdout and stderr together, the
// exit code, optional stdin text (printf syntax) and environment assignments ("A=1 B=2").
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/test_paths.h"

namespace zinc::test {

struct CliResult {
    int exitCode;
    std::string output;  // stdout and stderr together
};

inline CliResult runZincCli(const std::string& args, const std::string& stdinText = "", const std::string& env = "") {
    std::string cmd = env + (env.empty() ? "" : " ") + zincRtBinary() + " " + args + " 2>&1";
    if (!stdinText.empty())
        cmd = "printf '" + stdinText + "' | " + cmd;
    else if (args.find('<') == std::string::npos)
        cmd += " </dev/null";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return {-1, "popen failed"};
    std::string out;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

// The one line starting "zinc-rt: error: " (fails the test when there is not exactly one).
inline std::string cliErrorLine(const CliResult& r) {
    std::vector<std::string> lines;
    for (size_t at = 0; (at = r.output.find("zinc-rt: error: ", at)) != std::string::npos; at += 1)
        lines.push_back(r.output.substr(at, r.output.find('\n', at) - at));
    EXPECT_EQ(lines.size(), 1u) << r.output;
    return lines.empty() ? "" : lines[0];
}

}  // namespace zinc::test
