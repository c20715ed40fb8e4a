#include <catch2/catch.hpp>

#include "agent/base/log.h"

using nodehook::FormatLogLine;
using nodehook::LogLevel;

TEST_CASE("log lines are logfmt with quoted values only where needed") {
  std::string line = FormatLogLine(LogLevel::kInfo, "hook succeeded",
                                   {{"object", "ns/a"}, {"handler", "create"}, {"message", "said \"hi\"\n"}});
  REQUIRE(line.find(" level=info event=\"hook succeeded\" object=ns/a handler=create ") != std::string::npos);
  REQUIRE(line.find("message=\"said \\\"hi\\\"\\n\"") != std::string::npos);
}

TEST_CASE("empty values are quoted so the line stays parseable") {
  std::string line = FormatLogLine(LogLevel::kWarn, "x", {{"uid", ""}});
  REQUIRE(line.find(" uid=\"\"") != std::string::npos);
}
