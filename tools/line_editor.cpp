#include "tools/line_editor.h"

#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

namespace zinc::tools {
namespace {

constexpr char kCtrlA = 0x01, kCtrlC = 0x03, kCtrlD = 0x04, kCtrlE = 0x05, kCtrlK = 0x0b, kCtrlU = 0x15, kCtrlW = 0x17;
constexpr char kBackspace = 0x7f, kCtrlH = 0x08, kEscape = 0x1b;

// Raw mode for one read: no echo, no line buffering, no signals from keys (Ctrl-C is read as a
// byte), restored by the destructor.
class RawMode {
public:
    RawMode() {
        tcgetattr(STDIN_FILENO, &saved_);
        termios raw = saved_;
        raw.c_lflag &= ~(ECHO | ICANON | ISIG | IEXTEN);
        raw.c_iflag &= ~(IXON | ICRNL | INLCR);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
    }
    ~RawMode() { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_); }

private:
    termios saved_{};
};

// One byte from stdin; -1 at end of input or an error other than EINTR.
int readByte() {
    char c;
    while (true) {
        const ssize_t n = ::read(STDIN_FILENO, &c, 1);
        if (n == 1) return static_cast<unsigned char>(c);
        if (n < 0 && errno == EINTR) continue;
        return -1;
    }
}

void writeOut(std::string_view s) {
    while (!s.empty()) {
        const ssize_t n = ::write(STDERR_FILENO, s.data(), s.size());
        if (n <= 0) return;
        s.remove_prefix(static_cast<size_t>(n));
    }
}

bool isContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Terminal columns of UTF-8 text: one per code point (wide characters are rare in prompts).
size_t columns(std::string_view s) {
    size_t n = 0;
    for (char c : s) n += !isContinuation(c);
    return n;
}

size_t previousCharStart(const std::string& s, size_t at) {
    while (at > 0 && isContinuation(s[--at])) {
    }
    return at;
}

size_t nextCharStart(const std::string& s, size_t at) {
    if (at < s.size()) ++at;
    while (at < s.size() && isContinuation(s[at])) ++at;
    return at;
}

}  // namespace

LineEditor::LineEditor() : interactive_(isatty(STDIN_FILENO) && isatty(STDERR_FILENO)) {}

void LineEditor::addHistory(const std::string& line) {
    if (!line.empty() && (history_.empty() || history_.back() != line)) history_.push_back(line);
}

LineEditor::Read LineEditor::readLine(std::string_view prompt) {
    if (interactive_) return readRaw(prompt);
    writeOut(prompt);
    std::string line;
    if (!std::getline(std::cin, line)) {
        if (errno == EINTR) {  // SIGINT while waiting for a line
            std::cin.clear();
            return {Status::Interrupted, ""};
        }
        return {Status::EndOfInput, ""};
    }
    return {Status::Line, line};
}

void LineEditor::refresh(std::string_view prompt, const std::string& line, size_t cursor) const {
    std::string out = "\r";
    out += prompt;
    out += line;
    out += "\x1b[K\r";
    const size_t col = columns(prompt) + columns(std::string_view(line).substr(0, cursor));
    if (col > 0) out += "\x1b[" + std::to_string(col) + "C";
    writeOut(out);
}

LineEditor::Read LineEditor::readRaw(std::string_view prompt) {
    RawMode raw;
    std::string line;
    size_t cursor = 0;
    size_t browsing = history_.size();  // history_.size() = the line being typed
    std::string typed;                   // the line being typed while browsing the history
    auto recall = [&](size_t index) {
        if (browsing == history_.size()) typed = line;
        browsing = index;
        line = browsing == history_.size() ? typed : history_[browsing];
        cursor = line.size();
    };
    refresh(prompt, line, cursor);
    while (true) {
        const int c = readByte();
        if (c < 0) return {Status::EndOfInput, ""};
        switch (c) {
            case '\r':
            case '\n':
                writeOut("\r\n");
                return {Status::Line, line};
            case kCtrlC:
                writeOut("^C\r\n");
                return {Status::Interrupted, ""};
            case kCtrlD:
                if (line.empty()) {
                    writeOut("\r\n");
                    return {Status::EndOfInput, ""};
                }
                if (cursor < line.size()) line.erase(cursor, nextCharStart(line, cursor) - cursor);
                break;
            case kBackspace:
            case kCtrlH:
                if (cursor > 0) {
                    const size_t from = previousCharStart(line, cursor);
                    line.erase(from, cursor - from);
                    cursor = from;
                }
                break;
            case kCtrlA: cursor = 0; break;
            case kCtrlE: cursor = line.size(); break;
            case kCtrlK: line.erase(cursor); break;
            case kCtrlU:
                line.erase(0, cursor);
                cursor = 0;
                break;
            case kCtrlW: {
                size_t from = cursor;
                while (from > 0 && line[from - 1] == ' ') --from;
                while (from > 0 && line[from - 1] != ' ') --from;
                line.erase(from, cursor - from);
                cursor = from;
                break;
            }
            case kEscape: {
                const int kind = readByte();
                if (kind != '[' && kind != 'O') break;
                int key = readByte();
                if (key >= '0' && key <= '9') {  // ESC [ n ~ : Delete (3), Home (1, 7), End (4, 8)
                    const int tilde = readByte();
                    if (tilde != '~') break;
                    key = key == '3' ? 'X' : (key == '1' || key == '7') ? 'H' : (key == '4' || key == '8') ? 'F' : 0;
                }
                if (key == 'A' && browsing > 0) recall(browsing - 1);
                if (key == 'B' && browsing < history_.size()) recall(browsing + 1);
                if (key == 'C') cursor = nextCharStart(line, cursor);
                if (key == 'D') cursor = previousCharStart(line, cursor);
                if (key == 'H') cursor = 0;
                if (key == 'F') cursor = line.size();
                if (key == 'X' && cursor < line.size()) line.erase(cursor, nextCharStart(line, cursor) - cursor);
                break;
            }
            default:
                if (c >= 0x20 || c == '\t') {
                    line.insert(cursor, 1, static_cast<char>(c));
                    ++cursor;
                }
        }
        refresh(prompt, line, cursor);
    }
}

}  // namespace zinc::tools
