// Stop strings never leak, not even in part; streamed text is whole UTF-8 characters only.
#include <gtest/gtest.h>

#include "model/make_model/tokenizer_meta.h"
#include "model/tokenizer/utf8.h"
#include "tools/serve/stop_matcher.h"

namespace zinc::serve {
namespace {

// Pushes the pieces one by one; returns what came out, each release checked to be no part of
// a stop string's text past what the final answer holds.
std::vector<std::string> releases(StopMatcher& m, const std::vector<std::string>& pieces) {
    std::vector<std::string> out;
    for (const auto& p : pieces) out.push_back(m.push(p));
    out.push_back(m.finish());
    return out;
}

std::string joined(const std::vector<std::string>& parts) {
    std::string s;
    for (const auto& p : parts) s += p;
    return s;
}

TEST(StopMatcher, WithoutStopsEverythingPassesAtOnce) {
    StopMatcher m({});
    EXPECT_EQ(m.push("Hello"), "Hello");
    EXPECT_EQ(m.push(" <|end|>"), " <|end|>");
    EXPECT_EQ(m.finish(), "");
    EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, CutsBeforeAStopInOnePiece) {
    StopMatcher m({"STOP"});
    EXPECT_EQ(m.push("one two STOP three"), "one two ");
    EXPECT_TRUE(m.stopped());
    EXPECT_EQ(m.push("more"), "");
    EXPECT_EQ(m.finish(), "");
}

TEST(StopMatcher, AStopSplitOverPiecesNeverLeaks) {
    StopMatcher m({"<|end|>"});
    const auto out = releases(m, {"Hi <", "|e", "nd", "|> after"});
    EXPECT_EQ(out, (std::vector<std::string>{"Hi ", "", "", "", ""}));
    EXPECT_TRUE(m.stopped());
}

TEST(StopMatcher, AFalseStartIsReleasedOnceItCannotMatch) {
    StopMatcher m({"<|end|>"});
    EXPECT_EQ(m.push("a <|e"), "a ");
    EXPECT_EQ(m.push("x"), "<|ex");
    EXPECT_EQ(m.push("<"), "");
    EXPECT_EQ(m.finish(), "<");
    EXPECT_FALSE(m.stopped());
}

TEST(StopMatcher, TheEarliestOfSeveralStopsWins) {
    StopMatcher m({"world", "lo w", "\n\n"});
    EXPECT_EQ(joined(releases(m, {"hel", "lo wor", "ld\n\n"})), "hel");
}

TEST(StopMatcher, HoldsBackOnlyWhatCouldStillMatch) {
    StopMatcher m({"abc", "bd"});
    EXPECT_EQ(m.push("xxab"), "xx");  // "ab" could become "abc"; "b" could become "bd"
    EXPECT_EQ(m.push("d"), "a");      // "abd": "bd" found
    EXPECT_TRUE(m.stopped());
}

model::Tokenizer byteTokenizer() { return model::Tokenizer(model::builtinByteLevelTokenizer("qwen2")); }

TEST(TextStream, MultiByteCharactersArriveWhole) {
    const auto tok = byteTokenizer();
    const std::string text = "a你好😀é!";
    const auto ids = tok.encode(text, false, false);
    ASSERT_GT(ids.size(), 10u) << "the built-in vocabulary spells these characters byte by byte";
    TextStream stream(tok, {});
    std::string out;
    for (int32_t id : ids) {
        const std::string piece = stream.push(id);
        EXPECT_TRUE(model::utf8::isValid(piece)) << "a split character was released";
        out += piece;
    }
    out += stream.finish();
    EXPECT_EQ(out, text);
    EXPECT_EQ(out, tok.decode(ids));
}

TEST(TextStream, AMultiByteStopStringCutsBeforeItsFirstByte) {
    const auto tok = byteTokenizer();
    const auto ids = tok.encode("你好😀", false, false);
    TextStream stream(tok, {"好😀"});
    std::string out;
    for (int32_t id : ids) {
        const std::string piece = stream.push(id);
        EXPECT_TRUE(model::utf8::isValid(piece));
        out += piece;
    }
    out += stream.finish();
    EXPECT_EQ(out, "你");
    EXPECT_TRUE(stream.stopped());
}

TEST(TextStream, AnUnfinishedCharacterAtTheEndBecomesOneReplacement) {
    const auto tok = byteTokenizer();
    auto ids = tok.encode("ok😀", false, false);
    ids.pop_back();  // the emoji's last byte never comes
    TextStream stream(tok, {});
    std::string out;
    for (int32_t id : ids) out += stream.push(id);
    EXPECT_EQ(out, "ok");
    EXPECT_EQ(stream.finish(), model::utf8::kReplacementChar);
}

}  // namespace
}  // namespace zinc::serve
