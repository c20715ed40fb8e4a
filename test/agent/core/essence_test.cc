#include <catch2/catch.hpp>

#include "agent/core/essence.h"

using namespace nodehook;

namespace {
const char* kWidget = R"({"apiVersion":"example.com/v1","kind":"Widget",
  "metadata":{"name":"w","namespace":"ns","uid":"u1","resourceVersion":"5","generation":2,
              "labels":{"app":"demo"},"annotations":{"note":"x","kubectl.kubernetes.io/last-applied-configuration":"{}"}},
  "spec":{"size":1,"color":"red"},"status":{"phase":"Ready"}})";

std::string Essence(const std::string& json, std::vector<std::string> ignored = {}) {
  auto e = ComputeEssence(json, ignored);
  REQUIRE(e.ok());
  return *e;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("essence keeps spec, labels and annotations, sorted, and drops the rest") {
  REQUIRE(Essence(kWidget) ==
          R"({"metadata":{"annotations":{"note":"x"},"labels":{"app":"demo"}},"spec":{"color":"red","size":1}})");
}

TEST_CASE("status-only and resourceVersion-only changes leave the essence equal") {
  std::string changed = Replace(Replace(kWidget, R"("phase":"Ready")", R"("phase":"Failed")"),
                                R"("resourceVersion":"5")", R"("resourceVersion":"6")");
  REQUIRE(Essence(changed) == Essence(kWidget));
}

TEST_CASE("a spec change changes the essence") {
  REQUIRE(Essence(Replace(kWidget, R"("size":1)", R"("size":2)")) != Essence(kWidget));
}

TEST_CASE("ignored paths are left out, including annotation keys with dots") {
  std::string with_dots = Replace(kWidget, R"("note":"x")", R"("example.com/owner":"team-a")");
  std::string e = Essence(with_dots, {"metadata.annotations.example.com/owner", "spec.color"});
  REQUIRE(e == R"({"metadata":{"labels":{"app":"demo"}},"spec":{"size":1}})");
}

TEST_CASE("diff lists added, changed and removed fields with their paths") {
  auto diff = DiffEssences(R"({"spec":{"a":1,"b":2}})", R"({"spec":{"a":5,"c":3}})");
  REQUIRE(diff.ok());
  REQUIRE(*diff == R"([{"op":"change","path":["spec","a"],"old":1,"new":5},)"
                   R"({"op":"remove","path":["spec","b"],"old":2},)"
                   R"({"op":"add","path":["spec","c"],"new":3}])");
}

TEST_CASE("diff from nothing adds every top-level field") {
  auto diff = DiffEssences("", R"({"spec":{"a":1}})");
  REQUIRE(diff.ok());
  REQUIRE(*diff == R"([{"op":"add","path":["spec"],"new":{"a":1}}])");
}

TEST_CASE("an object that is not JSON is an error, not a crash") {
  REQUIRE_FALSE(ComputeEssence("{not json", {}).ok());
  REQUIRE_FALSE(ComputeEssence("[1,2]", {}).ok());
}
