#include <catch2/catch.hpp>

#include "agent/finalizers/finalizers.h"

using namespace nodehook;

TEST_CASE("a finalizer is named after the node, hashed when the name cannot be a qualified name part") {
  REQUIRE(FinalizerName("node-a") == "nodehook.io/node-a");
  std::string long_name(70, 'x');
  std::string hashed = FinalizerName(long_name);
  REQUIRE(hashed.rfind("nodehook.io/node-", 0) == 0);
  REQUIRE(hashed.size() - std::string("nodehook.io/").size() <= 63);
  REQUIRE(FinalizerName(long_name) == hashed);  // stable, so every agent computes the same
  REQUIRE(FinalizerName("-bad-") != "nodehook.io/-bad-");
}

TEST_CASE("adding a finalizer tests the exact current list, or the resourceVersion when there is none") {
  REQUIRE(AddFinalizerPatch({}, "42", "nodehook.io/a") ==
          R"([{"op":"test","path":"/metadata/resourceVersion","value":"42"},)"
          R"({"op":"add","path":"/metadata/finalizers","value":["nodehook.io/a"]}])");
  REQUIRE(AddFinalizerPatch({"x"}, "42", "nodehook.io/a") ==
          R"([{"op":"test","path":"/metadata/finalizers","value":["x"]},)"
          R"({"op":"add","path":"/metadata/finalizers/-","value":"nodehook.io/a"}])");
}

TEST_CASE("removing a finalizer keeps everyone else's and tests the list it replaces") {
  REQUIRE(RemoveFinalizerPatch({"other", "nodehook.io/a", "nodehook.io/b"}, "nodehook.io/a") ==
          R"([{"op":"test","path":"/metadata/finalizers","value":["other","nodehook.io/a","nodehook.io/b"]},)"
          R"({"op":"replace","path":"/metadata/finalizers","value":["other","nodehook.io/b"]}])");
  REQUIRE(RemoveFinalizerPatch({"other"}, "nodehook.io/a").empty());
}

TEST_CASE("finalizers are read from the object, and a malformed list is an error") {
  REQUIRE(*ReadFinalizers(R"({"metadata":{"finalizers":["a","b"]}})") == std::vector<std::string>{"a", "b"});
  REQUIRE(ReadFinalizers(R"({"metadata":{}})")->empty());
  REQUIRE_FALSE(ReadFinalizers(R"({"metadata":{"finalizers":"a"}})").ok());
}
