#include <catch2/catch.hpp>

#include <cstdlib>

#include "agent/object/essence.h"

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

namespace {
std::string WideSpec(int keys, int changed_key, int changed_value) {
  std::string json = R"({"metadata":{"name":"w","uid":"u"},"spec":{)";
  for (int i = 0; i < keys; ++i) {
    if (i > 0) json += ',';
    json += "\"k" + std::to_string(i) + "\":" + std::to_string(i == changed_key ? changed_value : i);
  }
  return json + "}}";
}

std::string Nested(int depth, const std::string& leaf) {
  return std::string(static_cast<size_t>(depth), '[') + leaf + std::string(static_cast<size_t>(depth), ']');
}
}  // namespace

TEST_CASE("a one-key change in a 100,000-key object is reported as exactly that change") {
  auto old_essence = ComputeEssence(WideSpec(100'000, 4711, 4711), {});
  auto new_essence = ComputeEssence(WideSpec(100'000, 4711, -1), {});
  REQUIRE(old_essence.ok());
  REQUIRE(new_essence.ok());
  auto diff = DiffEssences(*old_essence, *new_essence);
  REQUIRE(diff.ok());
  CHECK(*diff == R"([{"op":"change","path":["spec","k4711"],"old":4711,"new":-1}])");
}

TEST_CASE("diff walks both sides in key order: adds, changes and removes interleave by key") {
  auto diff = DiffEssences(R"({"b":1,"d":{"x":1},"a":1})", R"({"c":1,"a":2,"d":{"x":1,"y":[1]}})");
  REQUIRE(diff.ok());
  CHECK(*diff == R"([{"op":"change","path":["a"],"old":1,"new":2},{"op":"remove","path":["b"],"old":1},)"
                 R"({"op":"add","path":["c"],"new":1},{"op":"add","path":["d","y"],"new":[1]}])");
}

TEST_CASE("arrays are compared whole, and an unchanged nested array is no change") {
  auto same = DiffEssences(R"({"a":[{"y":1,"x":[2]}]})", R"({"a":[{"x":[2],"y":1}]})");
  REQUIRE(same.ok());
  CHECK(*same == "[]");
  auto changed = DiffEssences(R"({"a":[1,2]})", R"({"a":[2,1]})");
  REQUIRE(changed.ok());
  CHECK(*changed == R"([{"op":"change","path":["a"],"old":[1,2],"new":[2,1]}])");
}

TEST_CASE("essence and diff of an object nested 200,000 levels deep do not recurse") {
  // Recursion this deep would overflow any thread's stack; the explicit stacks live on the heap.
  std::string deep_old = R"({"metadata":{"name":"w","uid":"u"},"spec":)" + Nested(200'000, "1") + "}";
  std::string deep_new = R"({"metadata":{"name":"w","uid":"u"},"spec":)" + Nested(200'000, "2") + "}";
  auto old_essence = ComputeEssence(deep_old, {});
  auto new_essence = ComputeEssence(deep_new, {});
  REQUIRE(old_essence.ok());
  REQUIRE(new_essence.ok());
  CHECK(*old_essence == R"({"spec":)" + Nested(200'000, "1") + "}");
  auto diff = DiffEssences(*old_essence, *new_essence);
  REQUIRE(diff.ok());
  CHECK(diff->find(R"("path":["spec"])") != std::string::npos);
  auto same = DiffEssences(*old_essence, *old_essence);
  REQUIRE(same.ok());
  CHECK(*same == "[]");
}

TEST_CASE("17-significant-digit floats keep their exact value in the essence") {
  // The default RapidJSON parse rounds these; two different values could look equal.
  for (const char* literal : {"123456789.12345679", "0.30000000000000004", "9007199254740993.0", "2.2250738585072014e-308"}) {
    std::string json = std::string(R"({"metadata":{"name":"w","uid":"u"},"spec":{"v":)") + literal + "}}";
    auto essence = ComputeEssence(json, {});
    REQUIRE(essence.ok());
    std::string prefix = R"({"spec":{"v":)";
    REQUIRE(essence->rfind(prefix, 0) == 0);
    std::string written = essence->substr(prefix.size(), essence->size() - prefix.size() - 2);
    INFO(literal << " -> " << written);
    CHECK(std::strtod(written.c_str(), nullptr) == std::strtod(literal, nullptr));
  }
}

TEST_CASE("a digest is 16 hex digits that never change for an essence, and reads back to its value") {
  // Pinned: state files store digests as handlers' targets, so a new version must compute the
  // same ones. (The offset basis is FNV-1a 64's with its last digit missing; kept as it is.)
  CHECK(EssenceDigest("") == "14650fb0739d0383");
  CHECK(EssenceDigest("a") == "44bd8ad473cd9906");
  uint64_t value = 0;
  REQUIRE(ParseDigest(EssenceDigest(R"({"spec":{"size":1}})"), &value));
  CHECK(DigestText(value) == EssenceDigest(R"({"spec":{"size":1}})"));
  CHECK(DigestText(0) == "0000000000000000");
  CHECK(DigestText(0xfedcba9876543210ULL) == "fedcba9876543210");
  for (const char* not_a_digest : {"", "cbf29ce48422232", "cbf29ce4842223255", "CBF29CE484222325", "cbf29ce48422232g"}) {
    CHECK_FALSE(ParseDigest(not_a_digest, &value));
  }
}
