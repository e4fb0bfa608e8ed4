#pragma once
// Runs the built zinc-rt binary (tests/test_paths.h) with a command line, optionally with
// text on its stdin, and returns its exit code and everything it printed.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "tests/test_paths.h"

namespace zinc::test {

struct RunResult {
    int exitCode;
    std::string output;  // stdout and stderr together
};

// `stdinText` goes through printf '...': no single quotes in it.
inline RunResult runZinc(const std::string& args, const std::string& stdinText = "") {
    std::string cmd = zincRtBinary() + " " + args + " 2>&1";
    if (!stdinText.empty()) cmd = "printf '" + stdinText + "' | " + cmd;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return {-1, "popen failed"};
    std::string out;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

}  // namespace zinc::test
