#include "base/utf8.hpp"

#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/json_text.hpp"

namespace sparkops {
namespace {

const std::string kFffd(kReplacementCharacter);

TEST(Utf8Valid, AcceptsAsciiAndWellFormedMultibyte) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("python3"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x94\xA5 \xF4\x8F\xBF\xBF"));
}

TEST(Utf8Valid, RejectsEveryIllFormedClass) {
  for (const std::string bad :
       {"\xFF", "\x80", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF0\x80\x80\xAF",
        "\xF4\x90\x80\x80", "\xF5", "\xC3", "\xE2\x82", "\xF0\x9F\x94"}) {
    EXPECT_FALSE(is_valid_utf8(bad))
        << nlohmann::json(bad).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  }
}

TEST(Utf8Sanitize, ValidTextIsUnchanged) {
  const std::string s = "GB10 \xE2\x80\x94 caf\xC3\xA9";
  EXPECT_EQ(sanitize_utf8(s), s);
}

TEST(Utf8Sanitize, OneReplacementPerMaximalSubpart) {
  // Unicode 15 Table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64; F1 80 80, E1 80 and C2 are one
  // subpart each, and so are the lone continuation bytes 80, 80 and BF.
  EXPECT_EQ(sanitize_utf8("a\xF1\x80\x80\xE1\x80\xC2"
                          "b\x80"
                          "c\x80\xBF"
                          "d"),
            "a" + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d");
  EXPECT_EQ(sanitize_utf8("py\xFF\xFEthon"), "py" + kFffd + kFffd + "thon");
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // a surrogate: ED, A0, 80
  EXPECT_EQ(sanitize_utf8("ab\xE2\x82"), "ab" + kFffd);             // truncated at the end
  EXPECT_EQ(sanitize_utf8("\xE2\x82"
                          "x"),
            kFffd + "x");
}

TEST(Utf8Sanitize, AgreesWithTheJsonWriterOnRandomBytes) {
  // dump_json and sanitize_utf8 are the same rule: for any bytes, dumping them raw equals dumping
  // the sanitized string (which must not need any replacement).
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> len(0, 24);
  std::uniform_int_distribution<int> pick(0, 9);
  const unsigned char interesting[] = {0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xDF,
                                       0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0xA0};
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    const int n = len(rng);
    for (int i = 0; i < n; ++i) {
      s += pick(rng) < 6 ? static_cast<char>(interesting[rng() % sizeof interesting])
                         : static_cast<char>(rng() & 0xFF);
    }
    const std::string clean = sanitize_utf8(s);
    ASSERT_TRUE(is_valid_utf8(clean));
    ASSERT_EQ(dump_json(nlohmann::json(s)), nlohmann::json(clean).dump()) << round;
  }
}

TEST(Utf8Terminal, ControlCharactersCannotReachTheTerminal) {
  EXPECT_EQ(terminal_text("a\x1b]0;pwned\x07z"), "a" + kFffd + "]0;pwned" + kFffd + "z");
  EXPECT_EQ(terminal_text("\xC2\x9B"
                          "31m"),
            kFffd + "31m");  // C1 CSI
  EXPECT_EQ(terminal_text("line\n\tindent\x7F"), "line\n\tindent" + kFffd);
  EXPECT_EQ(terminal_text("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(Utf8Prefix, NeverCutsInsideACharacter) {
  const std::string s =
      "ab\xE2\x82\xAC"
      "cd";  // ab€cd
  EXPECT_EQ(utf8_prefix(s, 2), "ab");
  EXPECT_EQ(utf8_prefix(s, 3), "ab");
  EXPECT_EQ(utf8_prefix(s, 4), "ab");
  EXPECT_EQ(utf8_prefix(s, 5), "ab\xE2\x82\xAC");
  EXPECT_EQ(utf8_prefix(s, 100), s);
  EXPECT_EQ(utf8_prefix("\xFF\xFF\xFF", 2), "\xFF\xFF");  // ill-formed bytes are one byte each
}

}  // namespace
}  // namespace sparkops
