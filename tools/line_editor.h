#pragma once
// A small line editor for `zinc-rt chat` on a terminal: the cursor moves (Left/Right, Home/End,
// Ctrl-A/E), Backspace/Delete, Ctrl-U/Ctrl-K/Ctrl-W, Up/Down through the history, Ctrl-C and
// Ctrl-D reported to the caller. The terminal is in raw mode only while a line is read, so
// Ctrl-C during a reply still raises SIGINT. Not a terminal: plain lines from stdin.
// (Our own rather than readline/libedit: ~200 lines, and Ctrl-C at the prompt must come back to
// the chat loop as a value, which neither library's SIGINT handling gives simply.)
#include <string>
#include <string_view>
#include <vector>

namespace zinc::tools {

class LineEditor {
public:
    enum class Status { Line, Interrupted, EndOfInput };
    struct Read {
        Status status;
        std::string text;
    };

    LineEditor();  // interactive when stdin and stderr are terminals; the prompt goes to stderr
    bool interactive() const { return interactive_; }
    Read readLine(std::string_view prompt);
    void addHistory(const std::string& line);

private:
    Read readRaw(std::string_view prompt);
    void refresh(std::string_view prompt, const std::string& line, size_t cursor) const;

    bool interactive_;
    std::vector<std::string> history_;
};

}  // namespace zinc::tools
