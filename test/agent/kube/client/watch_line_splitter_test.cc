#include "agent/kube/client/watch_line_splitter.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace nodehook {
namespace {

struct Collected {
  std::vector<std::string> lines;
  std::function<Status(std::string_view)> sink() {
    return [this](std::string_view line) {
      lines.emplace_back(line);
      return Status::Ok();
    };
  }
};

const std::string kPayload =
    "{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"b\":\"x\\ny\"}}\r\n"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{}}\n";
const std::vector<std::string> kExpected = {
    "{\"type\":\"ADDED\",\"object\":{\"a\":1}}",
    "{\"type\":\"MODIFIED\",\"object\":{\"b\":\"x\\ny\"}}",
    "{\"type\":\"BOOKMARK\",\"object\":{}}",
};

TEST_CASE("lines come out whole wherever the chunk boundaries fall") {
  for (size_t first = 0; first <= kPayload.size(); ++first) {
    for (size_t second = first; second <= kPayload.size(); ++second) {
      WatchLineSplitter splitter;
      Collected out;
      REQUIRE(splitter.Feed(kPayload.substr(0, first), out.sink()).ok());
      REQUIRE(splitter.Feed(kPayload.substr(first, second - first), out.sink()).ok());
      REQUIRE(splitter.Feed(kPayload.substr(second), out.sink()).ok());
      INFO("split at " << first << " and " << second);
      REQUIRE(out.lines == kExpected);
      REQUIRE(splitter.pending_bytes() == 0);
    }
  }
}

TEST_CASE("lines come out whole when fed one byte at a time") {
  WatchLineSplitter splitter;
  Collected out;
  for (char c : kPayload) REQUIRE(splitter.Feed(std::string_view(&c, 1), out.sink()).ok());
  CHECK(out.lines == kExpected);
}

TEST_CASE("an unfinished last line is held back, not delivered") {
  WatchLineSplitter splitter;
  Collected out;
  REQUIRE(splitter.Feed("{\"a\":1}\n{\"b\"", out.sink()).ok());
  CHECK(out.lines == std::vector<std::string>{"{\"a\":1}"});
  CHECK(splitter.pending_bytes() == 4);
}

TEST_CASE("a line longer than the bound is an error, whether or not its newline arrived") {
  Collected out;
  SECTION("without newline") {
    WatchLineSplitter splitter(8);
    REQUIRE(splitter.Feed("12345", out.sink()).ok());
    Status st = splitter.Feed("6789", out.sink());
    CHECK(st.code() == StatusCode::kInvalid);
    CHECK_THAT(st.message(), Catch::Contains("longer than 8 bytes"));
  }
  SECTION("with newline") {
    WatchLineSplitter splitter(8);
    CHECK(splitter.Feed("ok\n123456789\n", out.sink()).code() == StatusCode::kInvalid);
    CHECK(out.lines == std::vector<std::string>{"ok"});
    CHECK_FALSE(splitter.Feed("more\n", out.sink()).ok());
  }
  SECTION("exactly at the bound is fine") {
    WatchLineSplitter splitter(8);
    CHECK(splitter.Feed("1234", out.sink()).ok());
    CHECK(splitter.Feed("5678\n", out.sink()).ok());
    CHECK(out.lines == std::vector<std::string>{"12345678"});
  }
}

TEST_CASE("an error from the line handler stops the feed") {
  WatchLineSplitter splitter;
  int calls = 0;
  Status st = splitter.Feed("a\nb\nc\n", [&](std::string_view) {
    ++calls;
    return InvalidError("bad line");
  });
  CHECK(st.message() == "bad line");
  CHECK(calls == 1);
}

}  // namespace
}  // namespace nodehook
