#include "agent/kube/client/json_scan.h"

#include <catch2/catch.hpp>
#include <string>

#include "test/agent/kube/refusals.h"

namespace nodehook {
namespace {

TEST_CASE("scanning an object yields each member's raw key, exact bytes and depth") {
  auto scan = ScanJson(R"( {"type" : "ADDED", "object":{"a":[1,{"b":[]}]}, "n":-1.5e3, "t":true} )");
  REQUIRE(scan.ok());
  CHECK(scan->kind == '{');
  CHECK(scan->depth == 5);
  REQUIRE(scan->parts.size() == 4);
  CHECK(scan->parts[0].key == "type");
  CHECK(scan->parts[0].value == R"("ADDED")");
  CHECK(scan->parts[0].depth == 0);
  CHECK(scan->parts[1].value == R"({"a":[1,{"b":[]}]})");
  CHECK(scan->parts[1].depth == 4);
  CHECK(scan->parts[2].value == "-1.5e3");
  CHECK(scan->Find("t")->value == "true");
  CHECK(scan->Find("missing") == nullptr);
}

TEST_CASE("scanning an array yields its elements") {
  auto scan = ScanJson(R"([{"x":1}, [], "s\"]", null])");
  REQUIRE(scan.ok());
  CHECK(scan->kind == '[');
  REQUIRE(scan->parts.size() == 4);
  CHECK(scan->parts[0].value == R"({"x":1})");
  CHECK(scan->parts[0].depth == 1);
  CHECK(scan->parts[1].value == "[]");
  CHECK(scan->parts[2].value == R"("s\"]")");
  CHECK(scan->parts[3].key.empty());
}

TEST_CASE("a scalar scans as one value without parts") {
  auto scan = ScanJson(" 42 ");
  REQUIRE(scan.ok());
  CHECK(scan->kind == 0);
  CHECK(scan->parts.empty());
}

TEST_CASE("malformed JSON is refused with the offset and what was expected") {
  const std::vector<Refusal> cases = {
      {"", "offset 0: expected a JSON value"},
      {"{", "the text ends inside a value"},
      {R"({"a":1,})", "offset 7: expected a key in double quotes"},
      {R"({"a" 1})", "offset 5: expected ':'"},
      {R"({"a":1])", "offset 6: expected '}'"},
      {"[1 2]", "offset 3: expected ',' or ']'"},
      {"[01]", "offset 2: expected ',' or ']'"},
      {"[1.]", "a digit after the decimal point"},
      {"[-]", "expected a digit"},
      {"[1e]", "a digit in the exponent"},
      {"[tru]", "expected a JSON value"},
      {"[\"a\\x\"]", "a valid escape"},
      {"[\"\\u12G4\"]", "4 hex digits"},
      {"[\"a\nb\"]", "no control character"},
      {"[\"open", "the closing quote"},
      {"{} {}", "expected the end of the text"},
      {"1 2", "expected the end of the text"},
  };
  CheckRefusals(cases, [](const std::string& text) { return ScanJson(text); }, StatusCode::kInvalid, "malformed JSON");
}

TEST_CASE("a million levels of nesting are measured without recursion") {
  std::string deep = R"({"a":)" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  auto scan = ScanJson(deep);
  REQUIRE(scan.ok());
  CHECK(scan->depth == 1'000'001);
  CHECK(scan->parts[0].depth == 1'000'000);
}

}  // namespace
}  // namespace nodehook
