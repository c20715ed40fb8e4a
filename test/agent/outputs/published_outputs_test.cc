// What hooks publish for their node: the "node" value's syntax, the prefixes, merging per kind,
// the stored form, and the union of a resource's objects.
#include <catch2/catch.hpp>

#include "agent/outputs/published_outputs.h"

namespace nodehook {
namespace {

PublishedOutputs Parsed(const std::string& json) {
  Result<PublishedOutputs> parsed = ParsePublishedOutputs(json);
  INFO(parsed.status().ToString());
  REQUIRE(parsed.ok());
  return *parsed;
}

std::string Problem(const std::string& json) {
  Result<PublishedOutputs> parsed = ParsePublishedOutputs(json);
  return parsed.ok() ? "" : parsed.status().message();
}

const std::vector<std::string> kPrefixes = {"widgets.example.com/"};

TEST_CASE("a hook's node outputs are read kind by kind and kept in the result file's form") {
  const std::string json =
      R"({"labels":{"widgets.example.com/ready":"yes"},"annotations":{"widgets.example.com/note":"a b"},)"
      R"("conditions":[{"type":"widgets.example.com/Kernel","status":"False","reason":"Old","message":"5.10"}],)"
      R"("taints":[{"key":"widgets.example.com/broken","effect":"NoSchedule"}]})";
  PublishedOutputs out = Parsed(json);
  CHECK(out.labels->at("widgets.example.com/ready") == "yes");
  CHECK(out.conditions->at(0).reason == "Old");
  CHECK(out.taints->at(0).value.empty());
  CHECK(CheckPrefixes(out, kPrefixes).ok());
  CHECK(OutputsJson(out) == json);
  CHECK(Parsed(OutputsJson(out)) == out);
  CHECK(OutputsJson(Parsed(R"({"labels":{}})")).empty());
  CHECK(Parsed(R"({"labels":{}})").Empty());
}

TEST_CASE("malformed node outputs are refused with the key and what was expected") {
  CHECK(Problem("[]") == "expected an object with labels, annotations, conditions, taints");
  CHECK(Problem(R"({"label":{}})") == "label: unknown key (expected labels, annotations, conditions, taints)");
  CHECK(Problem(R"({"labels":{"a.com/x":"no spaces"}})") ==
        "labels[\"a.com/x\"]: expected a label value (up to 63 letters, digits, '-', '_', '.', alphanumeric at both "
        "ends), got \"no spaces\"");
  CHECK(Problem(R"({"labels":{"a.com/x":1}})") == "labels[\"a.com/x\"]: expected a string value");
  CHECK(Problem(R"({"annotations":{"bad key":"v"}})").rfind("annotations[\"bad key\"]: expected a key", 0) == 0);
  CHECK(Problem(R"({"conditions":[{"type":"a.com/X","status":"Yes"}]})") ==
        "conditions[0].status: expected True, False or Unknown, got \"Yes\"");
  CHECK(Problem(R"({"conditions":[{"status":"True"}]})") == "conditions[0]: expected \"type\"");
  CHECK(Problem(R"({"conditions":[{"type":"a.com/X","status":"True","reason":"not camel"}]})").rfind(
            "conditions[0].reason: expected CamelCase", 0) == 0);
  CHECK(Problem(R"({"conditions":[{"type":"a.com/X","status":"True"},{"type":"a.com/X","status":"True"}]})") ==
        "conditions[1].type: \"a.com/X\" is given twice");
  CHECK(Problem(R"({"taints":[{"key":"a.com/x","effect":"NoWay"}]})") ==
        "taints[0].effect: expected NoSchedule, PreferNoSchedule or NoExecute, got \"NoWay\"");
  CHECK(Problem(R"({"taints":[{"key":"a.com/x","effect":"NoSchedule","color":"red"}]})") ==
        "taints[0].color: unknown key (expected key, value, effect)");
  CHECK(Problem(R"({"taints":[{"key":"a.com/x","effect":"NoSchedule"},{"key":"a.com/x","effect":"NoSchedule"}]})") ==
        "taints[1]: key \"a.com/x\" with effect NoSchedule is given twice");
  std::string many = R"({"labels":{)";
  for (size_t i = 0; i <= kMaxOutputsPerKind; ++i) many += (i ? "," : "") + std::string("\"a.com/k") + std::to_string(i) + "\":\"v\"";
  CHECK(Problem(many + "}}") == "labels: at most 64 entries, got 65");
}

TEST_CASE("every key must be under the resource's prefixes") {
  PublishedOutputs out = Parsed(R"({"labels":{"widgets.example.com/ok":"1"},"taints":[{"key":"kubernetes.io/x","effect":"NoSchedule"}]})");
  Status checked = CheckPrefixes(out, kPrefixes);
  CHECK(checked.message() == "taints[0].key: \"kubernetes.io/x\" is not under this resource's node_outputs.prefixes "
                             "(\"widgets.example.com/\")");
  CHECK(CheckPrefixes(Parsed(R"({"labels":{"widgets.example.com/ok":"1"}})"), {}).message() ==
        "labels[\"widgets.example.com/ok\"]: \"widgets.example.com/ok\" is not under this resource's "
        "node_outputs.prefixes (it declares none)");
  // The prefix alone is no key.
  CHECK_FALSE(CheckPrefixes(Parsed(R"({"labels":{"a.com/w":"1"}})"), {"a.com/w"}).ok());
}

TEST_CASE("each kind published replaces that kind; kinds not given are kept") {
  PublishedOutputs first = Parsed(R"({"labels":{"a.com/x":"1"},"taints":[{"key":"a.com/t","effect":"NoSchedule"}]})");
  PublishedOutputs merged = MergeOutputs(first, Parsed(R"({"labels":{"a.com/y":"2"}})"));
  CHECK(*merged.labels == std::map<std::string, std::string>{{"a.com/y", "2"}});
  CHECK(merged.taints == first.taints);
  CHECK(MergeOutputs(merged, Parsed(R"({"labels":{},"taints":[]})")).Empty());
}

TEST_CASE("a resource's outputs are the union of its objects'; the first object keeps a contested key") {
  std::vector<ObjectOutputs> objects = {
      {"ns/a", Parsed(R"({"labels":{"a.com/x":"1","a.com/y":"1"},"taints":[{"key":"a.com/t","effect":"NoSchedule"}]})")},
      {"ns/b", Parsed(R"({"labels":{"a.com/x":"2","a.com/z":"2","b.com/out":"1"},)"
                      R"("taints":[{"key":"a.com/t","value":"v","effect":"NoSchedule"},{"key":"a.com/t","effect":"NoExecute"}]})")},
      {"ns/c", Parsed(R"({"labels":{"a.com/y":"1"}})")},
  };
  std::vector<std::string> conflicts;
  PublishedOutputs all = UnionOf(objects, {"a.com/"}, &conflicts);
  CHECK(*all.labels == std::map<std::string, std::string>{{"a.com/x", "1"}, {"a.com/y", "1"}, {"a.com/z", "2"}});
  REQUIRE(all.taints->size() == 2);
  CHECK(all.taints->at(0).value.empty());
  CHECK(all.taints->at(1).effect == "NoExecute");
  CHECK(all.annotations->empty());
  CHECK(conflicts == std::vector<std::string>{"label a.com/x: ns/b differs from ns/a, which is kept",
                                              "taint a.com/t:NoSchedule: ns/b differs from ns/a, which is kept"});
}

}  // namespace
}  // namespace nodehook
