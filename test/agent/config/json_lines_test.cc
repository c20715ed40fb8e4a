#include <catch2/catch.hpp>

#include "agent/config/json_lines.h"

using namespace nodehook;

TEST_CASE("paths are built and taken apart with dots and brackets") {
  REQUIRE(ChildPath("", "resources") == "resources");
  REQUIRE(ChildPath(ElementPath("resources", 2), "hooks") == "resources[2].hooks");
  REQUIRE(ParentPath("resources[2].hooks") == "resources[2]");
  REQUIRE(ParentPath("resources[2]") == "resources");
  REQUIRE(ParentPath("resources").empty());
}

TEST_CASE("line index records the line of every key and array element") {
  const std::string text =
      "{\n"                                  // 1
      "  \"a\": 1,\n"                        // 2
      "  \"list\": [\n"                      // 3
      "    {\"b\": true},\n"                 // 4
      "    {\n"                              // 5
      "      \"b\": \"x\"}\n"                // 6
      "  ],\n"                               // 7
      "  \"c\": {\"d\": null}\n"             // 8
      "}\n";
  JsonLineIndex index = JsonLineIndex::Build(text, 64);
  REQUIRE(index.LineOf("") == 1);
  REQUIRE(index.LineOf("a") == 2);
  REQUIRE(index.LineOf("list") == 3);
  REQUIRE(index.LineOf("list[0]") == 4);
  REQUIRE(index.LineOf("list[0].b") == 4);
  REQUIRE(index.LineOf("list[1]") == 5);
  REQUIRE(index.LineOf("list[1].b") == 6);
  REQUIRE(index.LineOf("c.d") == 8);
  REQUIRE(index.duplicate_keys().empty());
}

TEST_CASE("a path that is not in the text takes the line of its nearest ancestor") {
  JsonLineIndex index = JsonLineIndex::Build("{\n\"r\": [\n\n {\"x\": 1}]}", 64);
  REQUIRE(index.LineOf("r[0].missing.deeper") == 4);
  REQUIRE(index.LineOf("nothing") == 1);
}

TEST_CASE("a key repeated in one object is reported at the repeat's line") {
  JsonLineIndex index = JsonLineIndex::Build("{\"a\": 1,\n\"b\": {\"a\": 2},\n\"a\": 3}", 64);
  REQUIRE(index.duplicate_keys().size() == 1);
  REQUIRE(index.duplicate_keys()[0].path == "a");
  REQUIRE(index.duplicate_keys()[0].line == 3);
  REQUIRE(index.LineOf("a") == 1);
}

TEST_CASE("byte offsets convert to 1-based line and column") {
  const std::string text = "ab\ncde\nf";
  REQUIRE(PositionOfOffset(text, 0).line == 1);
  REQUIRE(PositionOfOffset(text, 0).column == 1);
  REQUIRE(PositionOfOffset(text, 4).line == 2);
  REQUIRE(PositionOfOffset(text, 4).column == 2);
  REQUIRE(PositionOfOffset(text, 7).line == 3);
  REQUIRE(PositionOfOffset(text, 7).column == 1);
}
