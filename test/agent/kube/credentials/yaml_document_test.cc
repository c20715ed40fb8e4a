#include "agent/kube/credentials/yaml_document.h"

#include <catch2/catch.hpp>

#include "agent/kube/credentials/base64.h"
#include "test/agent/kube/refusals.h"

namespace nodehook {
namespace {

TEST_CASE("block mappings, sequences, comments and quoted scalars parse with their positions") {
  auto root = ParseYamlDocument(R"(# a comment
---
clusters:
- cluster:
    server: https://10.0.0.1:6443   # trailing comment
    certificate-authority-data: 'QUJD'
  name: "prod"
users:
- name: admin
  user:
    token: "a\"b#c"
    empty:
    path: 'it''s'
    number: 12345
)");
  REQUIRE(root.ok());
  const YamlNode& prod = root->Find("clusters")->items.at(0);
  CHECK(prod.Find("name")->scalar == "prod");
  CHECK(prod.Find("name")->quoted);
  const YamlNode* server = prod.Find("cluster")->Find("server");
  CHECK(server->scalar == "https://10.0.0.1:6443");
  CHECK_FALSE(server->quoted);
  CHECK(server->line == 5);
  CHECK(server->column == 13);
  const YamlNode* user = root->Find("users")->items.at(0).Find("user");
  CHECK(user->Find("token")->scalar == "a\"b#c");
  CHECK(user->Find("empty")->kind == YamlNode::Kind::kNull);
  CHECK(user->Find("path")->scalar == "it's");
  CHECK(user->Find("number")->scalar == "12345");
}

TEST_CASE("flow style, block scalars and anchors parse as kubectl's YAML reader reads them") {
  auto root = ParseYamlDocument(R"(preferences: {}
list: [a, "b", {c: d}]
literal: |
  line one
  line two
folded: >-
  one
  two
base: &shared {x: 1}
copy: *shared
)");
  REQUIRE(root.ok());
  CHECK(root->Find("preferences")->is_map());
  CHECK(root->Find("preferences")->entries.empty());
  const YamlNode* list = root->Find("list");
  REQUIRE(list->items.size() == 3);
  CHECK(list->items[1].scalar == "b");
  CHECK(list->items[2].Find("c")->scalar == "d");
  CHECK(root->Find("literal")->scalar == "line one\nline two\n");
  CHECK(root->Find("literal")->quoted);
  CHECK(root->Find("folded")->scalar == "one two");
  CHECK(root->Find("copy")->Find("x")->scalar == "1");
}

TEST_CASE("JSON is read as YAML") {
  auto root = ParseYamlDocument(R"({"a": {"b": [1, true, null, "x"]}})");
  REQUIRE(root.ok());
  const YamlNode* b = root->Find("a")->Find("b");
  REQUIRE(b->items.size() == 4);
  CHECK(b->items[1].scalar == "true");
  CHECK(b->items[2].kind == YamlNode::Kind::kNull);
  CHECK(b->items[3].quoted);
}

TEST_CASE("bad YAML is refused with its line and column") {
  const std::vector<Refusal> cases = {
      {"a: 1\n  b: 2\n", "line 2, column"},
      {"a: 1\na: 2\n", "line 2, column 1: duplicate key 'a'"},
      {"a: [1, 2\n", "line 2, column 1"},
      {"? [x]\n: 1\n", "line 1, column 3: a mapping key must be a string"},
      {"a: *nowhere\n", "line 1, column"},
  };
  CheckRefusals(cases, [](const std::string& text) { return ParseYamlDocument(text); }, StatusCode::kInvalid);
}

TEST_CASE("a document nested far too deep is refused instead of overflowing the stack") {
  for (int depth : {kYamlMaxDepth + 1, 5'000, 200'000}) {
    INFO(depth);
    std::string json = std::string(depth, '[') + std::string(depth, ']');
    auto root = ParseYamlDocument(json);
    REQUIRE_FALSE(root.ok());
    CHECK_THAT(root.status().message(), Catch::Contains("line 1, column"));
  }
  std::string nested_maps;
  for (int i = 0; i < 100'000; ++i) nested_maps += "{\"a\":";
  nested_maps += "1" + std::string(100'000, '}');
  CHECK_FALSE(ParseYamlDocument(nested_maps).ok());
  std::string fits = std::string(kYamlMaxDepth, '[') + std::string(kYamlMaxDepth, ']');
  CHECK(ParseYamlDocument(fits).ok());
}

TEST_CASE("aliases that would expand without bound are refused") {
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) bomb += ", " + prev;
    bomb += "]\n";
  }
  auto root = ParseYamlDocument(bomb);
  REQUIRE_FALSE(root.ok());
  CHECK_THAT(root.status().message(), Catch::Contains("aliases expanding"));
}

TEST_CASE("an empty document is null") {
  auto root = ParseYamlDocument("# nothing\n\n");
  REQUIRE(root.ok());
  CHECK(root->kind == YamlNode::Kind::kNull);
}

TEST_CASE("base64 decodes with or without padding and line breaks, and refuses garbage") {
  CHECK(Base64Decode("aGVsbG8=").value() == "hello");
  CHECK(Base64Decode("aGVs\nbG8").value() == "hello");
  CHECK(Base64Decode("").value().empty());
  CHECK(Base64Decode("+/+/").value() == "\xfb\xff\xbf");
  CHECK_THAT(Base64Decode("aGV*bG8=").status().message(), Catch::Contains("offset 3"));
  CHECK_FALSE(Base64Decode("aGVsb").ok());
  CHECK_FALSE(Base64Decode("aG=Vs").ok());
}

TEST_CASE("base64 encoding round-trips every length") {
  CHECK(Base64Encode("").empty());
  CHECK(Base64Encode("h") == "aA==");
  CHECK(Base64Encode("he") == "aGU=");
  CHECK(Base64Encode("hello") == "aGVsbG8=");
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  CHECK(Base64Decode(Base64Encode(bytes)).value() == bytes);
}

}  // namespace
}  // namespace nodehook
