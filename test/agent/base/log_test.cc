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

TEST_CASE("logfmt lines start with a ts key, so logfmt decoders see the timestamp as a field") {
  std::string line = FormatLogLine(nodehook::LogFormat::kLogfmt, LogLevel::kInfo, "listed", {{"objects", "3"}});
  REQUIRE(line.rfind("ts=", 0) == 0);
  REQUIRE(line.find("Z level=info event=listed objects=3") != std::string::npos);
}

TEST_CASE("json lines are one object with ts, level, event and text fields as strings") {
  std::string line = FormatLogLine(nodehook::LogFormat::kJson, LogLevel::kWarn, "hook failed",
                                   {{"object", "ns/a"}, {"output", "tab\there \"quoted\" back\\slash\x01"}});
  REQUIRE(line.rfind("{\"ts\":\"", 0) == 0);
  REQUIRE(line.find("\",\"level\":\"warn\",\"event\":\"hook failed\",\"object\":\"ns/a\","
                    "\"output\":\"tab\\there \\\"quoted\\\" back\\\\slash\\u0001\"}") != std::string::npos);
  REQUIRE(line.find('\n') == std::string::npos);
}

TEST_CASE("json lines replace invalid UTF-8 from hook output and keep valid multi-byte text") {
  std::string line = FormatLogLine(nodehook::LogFormat::kJson, LogLevel::kInfo, "x",
                                   {{"output", "caf\xc3\xa9 \xff\xfe \xed\xa0\x80 \xf0\x9f\x98\x80 \xe2\x82"}});
  REQUIRE(line.find("\"output\":\"caf\xc3\xa9 \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \xf0\x9f\x98\x80 \\ufffd\\ufffd\"") !=
          std::string::npos);
}

TEST_CASE("json lines write numbers and booleans unquoted; logfmt writes them as before") {
  std::size_t objects = 0;
  std::initializer_list<nodehook::LogField> fields = {
      {"objects", objects}, {"retries", -3}, {"in_memory", true}, {"text", "0"}, {"flag", "true"}};
  std::string json = FormatLogLine(nodehook::LogFormat::kJson, LogLevel::kInfo, "listed", fields);
  REQUIRE(json.find("\"event\":\"listed\",\"objects\":0,\"retries\":-3,\"in_memory\":true,\"text\":\"0\","
                    "\"flag\":\"true\"}") != std::string::npos);
  std::string logfmt = FormatLogLine(nodehook::LogFormat::kLogfmt, LogLevel::kInfo, "listed", fields);
  REQUIRE(logfmt.find("event=listed objects=0 retries=-3 in_memory=true text=0 flag=true") != std::string::npos);
}

TEST_CASE("log formats parse by name and refuse anything else") {
  nodehook::LogFormat f = nodehook::LogFormat::kLogfmt;
  REQUIRE(nodehook::ParseLogFormat("json", &f));
  REQUIRE(f == nodehook::LogFormat::kJson);
  REQUIRE(nodehook::ParseLogFormat("logfmt", &f));
  REQUIRE(f == nodehook::LogFormat::kLogfmt);
  REQUIRE_FALSE(nodehook::ParseLogFormat("JSON ", &f));
}
