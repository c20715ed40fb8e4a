#include <catch2/catch.hpp>

#include "agent/base/printable.h"

using nodehook::EscapeForTerminal;

TEST_CASE("terminal escape sequences in hook output are shown, not obeyed") {
  REQUIRE(EscapeForTerminal("\x1b[2J\x1b]0;owned\x07red") == "\\x1b[2J\\x1b]0;owned\\x07red");
  REQUIRE(EscapeForTerminal("carriage\rreturn and delete\x7f") == "carriage\\x0dreturn and delete\\x7f");
}

TEST_CASE("newlines and tabs keep multi-line output readable") {
  REQUIRE(EscapeForTerminal("line 1\n\tline 2\n") == "line 1\n\tline 2\n");
}

TEST_CASE("valid UTF-8 is copied, C1 controls and bidi overrides are escaped") {
  REQUIRE(EscapeForTerminal("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  REQUIRE(EscapeForTerminal("\xC2\x9B" "31m") == "\\u009b31m");               // 8-bit CSI
  REQUIRE(EscapeForTerminal("abc\xE2\x80\xAE" "cba") == "abc\\u202ecba");      // right-to-left override
}

TEST_CASE("bytes that are not UTF-8 are escaped one by one") {
  REQUIRE(EscapeForTerminal("\x9B" "31m") == "\\x9b31m");        // a raw 8-bit CSI byte
  REQUIRE(EscapeForTerminal("\xC3") == "\\xc3");                 // cut-off sequence
  REQUIRE(EscapeForTerminal("\xC0\xAF") == "\\xc0\\xaf");        // overlong '/'
  REQUIRE(EscapeForTerminal("\xED\xA0\x80") == "\\xed\\xa0\\x80");  // a surrogate
}

TEST_CASE("a list of names shows the first few and counts the rest") {
  CHECK(nodehook::FirstNames({}, 3).empty());
  CHECK(nodehook::FirstNames({"a"}, 3) == "a");
  CHECK(nodehook::FirstNames({"a", "b", "c"}, 3) == "a, b, c");
  CHECK(nodehook::FirstNames({"a", "b", "c", "d", "e"}, 3) == "a, b, c and 2 more");
}
