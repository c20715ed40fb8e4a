// The environment seam and the pod's downward API, read from a map: no setenv.
#include <catch2/catch.hpp>

#include "agent/base/environment.h"

using namespace nodehook;

TEST_CASE("the downward API is read into one struct; a variable not set is empty") {
  PodEnvironment pod = ReadPodEnvironment(MapEnvironment(
      {{"NODE_NAME", "node-a"}, {"POD_NAME", "nodehook-x1"}, {"POD_NAMESPACE", "ops"}, {"POD_UID", "u-1"}}));
  CHECK(pod.node_name == "node-a");
  CHECK(pod.pod_name == "nodehook-x1");
  CHECK(pod.pod_namespace == "ops");
  CHECK(pod.pod_uid == "u-1");
  CHECK(pod.KnowsPod());
  CHECK(pod.PodKey() == "ops/nodehook-x1");

  PodEnvironment off = ReadPodEnvironment(MapEnvironment({{"POD_NAMESPACE", "ops"}}));
  CHECK(off.node_name.empty());
  CHECK(off.pod_uid.empty());
  CHECK_FALSE(off.KnowsPod());
}

TEST_CASE("a variable set empty is read as not set by the pod's readers") {
  PodEnvironment pod = ReadPodEnvironment(MapEnvironment({{"POD_NAME", ""}, {"POD_NAMESPACE", "ops"}}));
  CHECK(pod.pod_name.empty());
  CHECK_FALSE(pod.KnowsPod());
}

TEST_CASE("a lookup tells a variable set empty from one not set") {
  EnvLookup env = MapEnvironment({{"EMPTY", ""}});
  REQUIRE(env("EMPTY").has_value());
  CHECK(env("EMPTY")->empty());
  CHECK_FALSE(env("MISSING").has_value());
  CHECK_FALSE(ProcessEnvironment()("NODEHOOK_SURELY_NOT_SET_IN_ANY_TEST").has_value());
}
