#include "agent/kube/yaml_lite.h"

#include <catch2/catch.hpp>

#include "agent/kube/base64.h"

namespace nodehook {
namespace {

const char* kKubeconfigShape = R"(# a comment
---
apiVersion: v1
clusters:
- cluster:
    server: https://10.0.0.1:6443   # trailing comment
    certificate-authority-data: 'QUJD'
  name: "prod"
contexts:
  - name: ctx
    context: x
    
users:
- name: admin
  user:
    token: "a\"b#c"
    empty:
    path: 'it''s'
current-context: ctx
)";

TEST_CASE("kubeconfig-shaped YAML becomes nested maps and lists") {
  auto root = ParseYamlLite(kKubeconfigShape);
  REQUIRE(root.ok());
  REQUIRE(root->is_map());
  CHECK(root->Find("current-context")->scalar == "ctx");
  const YamlNode* clusters = root->Find("clusters");
  REQUIRE(clusters->is_list());
  REQUIRE(clusters->items.size() == 1);
  const YamlNode& prod = clusters->items[0];
  CHECK(prod.Find("name")->scalar == "prod");
  CHECK(prod.Find("cluster")->Find("server")->scalar == "https://10.0.0.1:6443");
  CHECK(prod.Find("cluster")->Find("server")->line == 6);
  CHECK(prod.Find("cluster")->Find("certificate-authority-data")->scalar == "QUJD");
  const YamlNode* contexts = root->Find("contexts");
  REQUIRE(contexts->is_list());
  CHECK(contexts->items.at(0).Find("context")->scalar == "x");
  const YamlNode* user = root->Find("users")->items.at(0).Find("user");
  CHECK(user->Find("token")->scalar == "a\"b#c");
  CHECK(user->Find("empty")->kind == YamlNode::Kind::kNull);
  CHECK(user->Find("path")->scalar == "it's");
}

TEST_CASE("lists of scalars and nested lists parse") {
  auto root = ParseYamlLite("a:\n  - 1\n  - two words\n  -\n    - inner\nb: ~\n");
  REQUIRE(root.ok());
  const YamlNode* a = root->Find("a");
  REQUIRE(a->items.size() == 3);
  CHECK(a->items[1].scalar == "two words");
  CHECK(a->items[2].items.at(0).scalar == "inner");
  CHECK(root->Find("b")->kind == YamlNode::Kind::kNull);
}

TEST_CASE("unsupported YAML is refused with its line") {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"a: 1\nb: {c: 1}\n", "line 2: flow style"},
      {"a: 1\nb: [1, 2]\n", "line 2: flow style"},
      {"a: &x 1\n", "line 1: anchors and aliases"},
      {"a: 1\nb: *x\n", "line 2: anchors and aliases"},
      {"a: |\n  text\n", "line 1: block scalars"},
      {"a: !!str 1\n", "line 1: tags"},
      {"a: 1\n  b: 2\n", "line 2: unexpected indentation"},
      {"a:\n  b: 1\nc\n", "line 3: expected 'key: value'"},
      {"a: \"open\n", "line 1: unterminated quoted scalar"},
      {"a: 1\na: 2\n", "line 2: duplicate key 'a'"},
      {"a: 1\n---\nb: 2\n", "line 2: only one document"},
      {"a: 'x' y\n", "line 1: unexpected text after quoted scalar"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto root = ParseYamlLite(c.text);
    REQUIRE_FALSE(root.ok());
    CHECK(root.status().code() == StatusCode::kInvalid);
    CHECK_THAT(root.status().message(), Catch::Contains(c.expected));
  }
}

TEST_CASE("an empty document is null") {
  auto root = ParseYamlLite("# nothing\n\n");
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

}  // namespace
}  // namespace nodehook
