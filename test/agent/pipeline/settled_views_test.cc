// The /v1/objects snapshot carries each object's settled resourceVersion, as each resource.s
// cache says it when the snapshot is taken, and the endpoint's JSON names it.
#include <catch2/catch.hpp>

#include <map>

#include "agent/pipeline/object_views_publisher.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

TEST_CASE("each object in the snapshot carries the resourceVersion the node settled at") {
  TempDir dir;
  FakeClock clock;
  auto store = std::move(SqliteStateStore::Open(dir.File("state.db"), "node-a", {})).value();
  std::map<std::string, std::string> settled{{"uid-a", "17"}};
  ObjectViewsPublisherOptions options;
  options.settled_version = [&settled](const std::string& resource, const std::string& uid) {
    CHECK(resource == "widgets.example.com/v1");
    return settled.count(uid) ? settled.at(uid) : "";
  };
  ObjectViewsPublisher publisher{*store, clock, options};
  for (const char* name : {"a", "b"}) {
    ObjectRecord o{std::string("uid-") + name, "widgets.example.com/v1", "ns", name, "{}", "{}", 1};
    REQUIRE(store->RecordHandled(o, "create").ok());
  }
  publisher.RefreshIfDue();
  auto views = publisher.Latest().value();
  REQUIRE(views->objects.size() == 2);
  CHECK(views->objects[0]->settled_resource_version == "17");
  CHECK(views->objects[1]->settled_resource_version.empty());
  std::string json = ObjectsToJson({*views->objects[0], *views->objects[1]}, 1000, false);
  CHECK_THAT(json, Catch::Contains(R"("settled_resource_version":"17")"));
  CHECK(json.find("settled_resource_version") == json.rfind("settled_resource_version"));  // b has none

  // A reconcile that settles b announces it by uid: the next refresh reads b again, not a.
  settled["uid-b"] = "18";
  settled["uid-a"] = "19";  // not announced: a's view is kept as it was
  publisher.MarkChanged("uid-b");
  clock.Advance(std::chrono::seconds(1));
  publisher.RefreshIfDue();
  auto next = publisher.Latest().value();
  CHECK(next->objects[0]->settled_resource_version == "17");
  CHECK(next->objects[1]->settled_resource_version == "18");
}

}  // namespace
}  // namespace nodehook
