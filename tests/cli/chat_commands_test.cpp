// `zinc-rt chat` fed from a pipe: multi-line input, /help, /save, /reset (asks first), /load,
// and the turn after /load starting afresh from the loaded conversation. (The terminal side —
// line editor, Up arrow, Ctrl-C — is chat_tmux_test.sh.)
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "tests/cli/run_zinc.h"

namespace zinc {
namespace {

TEST(ChatCommands, SaveResetLoadAndMultiLineInput) {
    const auto dir = test::scratchDir();
    const std::string saved = (dir / "conversation.json").string();
    const auto input = dir / "chat-input.txt";
    std::ofstream(input) << "Once upon\\\na time\n/help\n/save " << saved << "\n/reset\nn\n/reset\ny\n/load " << saved
                         << "\n\"\"\"The dog\nran\"\"\"\n/exit\n";
    const auto r = test::runZincCli("chat " + test::sharedPath("models/stories260K.gguf") + " -v -n 3 --temp 0 < " + input.string());
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (const std::string& line : std::vector<std::string>{"[turn 1: prefill 0 cached + ", "/save FILE     write the conversation to FILE (JSON)",
                                   "saved 2 messages to " + saved, "conversation kept", "conversation reset",
                                   "loaded 2 messages from " + saved, "[turn 2: prefill 0 cached + "})
        EXPECT_NE(r.output.find(line), std::string::npos) << "missing '" << line << "' in:\n" << r.output;
    std::ifstream file(saved);
    const auto json = nlohmann::json::parse(file);
    ASSERT_EQ(json["messages"].size(), 2u) << json.dump();
    EXPECT_EQ(json["messages"][0]["role"], "user");
    EXPECT_EQ(json["messages"][0]["content"], "Once upon\na time");
    EXPECT_EQ(json["messages"][1]["role"], "assistant");
}

}  // namespace
}  // namespace zinc
