// `nodehook rbac`: the command loads the config and prints the roles agent/admission derives.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "agent/admission/rbac_yaml.h"
#include "agent/app/rbac_command.h"

using namespace nodehook;

namespace {

// `nodehook rbac` for a config of one widgets resource with `resource_extra` (JSON members, each
// followed by a comma) and an update hook.
std::string RbacFor(const std::string& resource_extra) {
  std::string path = "/tmp/nodehook-rbac-" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream config(path);
    config << R"({"state_file":"/var/lib/nodehook/state.db","api":{"in_cluster":true},"resources":[{"group":)"
              R"("example.com","version":"v1","plural":"widgets",)"
           << resource_extra << R"("hooks":{"update":{"argv":["/bin/true"]}}}]})";
  }
  RbacCommandArgs args;
  args.config_path = path;
  std::ostringstream out, err;
  const int code = RunRbacCommand(args, out, err);
  std::remove(path.c_str());
  REQUIRE(code == 0);
  CHECK(err.str().empty());
  return out.str();
}

}  // namespace

TEST_CASE("the rbac command derives the role from the shipped example config without a node name") {
  RbacCommandArgs args;
  args.config_path = std::string(NODEHOOK_SOURCE_DIR) + "/config/example.json";
  std::ostringstream out, err;
  REQUIRE(RunRbacCommand(args, out, err) == 0);
  CHECK(err.str().empty());
  CHECK(out.str().find("resources: [\"widgets\"]\n    verbs: [\"list\", \"watch\"]\n") != std::string::npos);
}

TEST_CASE("the rbac command names the file and key of a config problem and exits 2") {
  RbacCommandArgs args;
  args.config_path = "/nonexistent/nodehook.json";
  std::ostringstream out, err;
  CHECK(RunRbacCommand(args, out, err) == 2);
  CHECK(err.str().find("/nonexistent/nodehook.json") != std::string::npos);
  CHECK(out.str().empty());
}

TEST_CASE("the rbac command prints the agent pods Role after the ClusterRole for a finalizer config") {
  std::string path = "/tmp/nodehook-rbac-finalizer-" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream config(path);
    config << R"({"state_file":"/var/lib/nodehook/state.db","api":{"in_cluster":true},"resources":[{"group":)"
              R"("example.com","version":"v1","plural":"widgets","finalizer":true,)"
              R"("hooks":{"delete":{"argv":["/bin/true"]}}}]})";
  }
  RbacCommandArgs args;
  args.config_path = path;
  std::ostringstream out, err;
  REQUIRE(RunRbacCommand(args, out, err) == 0);
  CHECK(err.str().empty());
  CHECK(out.str().find("---\n" + AgentPodsRoleYaml("nodehook")) != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("hook-published node outputs add a Role to read the own pod (its tolerations), unless the agent pods Role "
          "has that already") {
  const std::string outputs = R"("node_outputs":{"prefixes":["widgets.example.com/"]},)";
  CHECK(RbacFor(outputs).find("---\n" + OwnPodRoleYaml("nodehook")) != std::string::npos);
  CHECK(OwnPodRoleYaml("nodehook").find(R"(verbs: ["get"])") != std::string::npos);
  const std::string both = RbacFor(outputs + R"("finalizer":true,)");
  CHECK(both.find(AgentPodsRoleYaml("nodehook")) != std::string::npos);
  CHECK(both.find("-own-pod") == std::string::npos);
  CHECK(RbacFor("").find("-own-pod") == std::string::npos);
}

TEST_CASE("a rollout policy adds a Role for the rollout Leases in the agent's namespace, and none without one") {
  std::string with = RbacFor(R"("rollout":{"max_nodes":2},)");
  CHECK(with.find("name: nodehook-rollout\n") != std::string::npos);
  CHECK(with.find(R"(verbs: ["get", "list", "watch", "create", "update", "delete"])") != std::string::npos);
  CHECK(RbacFor("").find("-rollout") == std::string::npos);
}

