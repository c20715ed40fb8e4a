#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "agent/app/release_command.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

// A config file in a fresh directory, removed when the test ends. No node name, and hooks that
// do not exist here: neither matters for releasing finalizers.
class ConfigFile {
 public:
  ConfigFile() {
    char pattern[] = "/tmp/nodehook-release-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::ofstream(path()) << R"({"state_file": "/s.db", "api": {"in_cluster": true}, "resources": [
      {"group": "example.com", "version": "v1", "plural": "widgets", "namespace": "shop",
       "hooks": {"delete": {"argv": ["/nowhere/hook"]}}}]})";
  }
  ~ConfigFile() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string path() const { return dir_ + "/config.json"; }

 private:
  std::string dir_;
};

}  // namespace

TEST_CASE("release-finalizers without --yes says what it would do, that no delete hook runs, and changes nothing") {
  ConfigFile config;
  ReleaseCommandArgs args{config.path(), false};
  bool connected = false;
  auto factory = [&](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
    connected = true;
    return std::unique_ptr<KubeClient>(std::make_unique<FakeKubeClient>());
  };
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, factory, out, err) == 2);
  CHECK_FALSE(connected);
  CHECK(err.str().find("widgets.example.com/v1 (namespace shop)") != std::string::npos);
  CHECK(err.str().find("No delete hook runs") != std::string::npos);
  CHECK(err.str().find("--yes") != std::string::npos);
}

TEST_CASE("release-finalizers --yes releases, says so, and exits 1 when an object could not be released") {
  ConfigFile config;
  ReleaseCommandArgs args{config.path(), true};
  auto* fake = new FakeKubeClient();
  KubeObject w;
  w.meta = {"u1", "shop", "w1", "3", true};
  w.json = R"({"metadata":{"name":"w1","namespace":"shop","finalizers":["nodehook.io/node-a"]}})";
  ObjectList list;
  list.items = {w};
  fake->QueueList(list);
  fake->QueuePatchResult(Status(StatusCode::kForbidden, "HTTP 403"));
  auto factory = [&](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
    return std::unique_ptr<KubeClient>(fake);
  };
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, factory, out, err) == 1);
  CHECK(out.str().find("No delete hook runs") == 0);
  CHECK(out.str().find("released 0 finalizers from 0 of 1 objects; 1 failed (see above)") != std::string::npos);
  CHECK(err.str() == "cannot release widgets.example.com/v1 shop/w1: HTTP 403\n");
}

TEST_CASE("release-finalizers exits 2 on a config it cannot read") {
  ReleaseCommandArgs args{"/nonexistent/config.json", true};
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, DefaultReleaseClient, out, err) == 2);
  CHECK(err.str().find("/nonexistent/config.json: cannot read the file") == 0);
}
