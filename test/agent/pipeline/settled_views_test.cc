// The /v1/objects snapshot carries the lookup of each object's settled resourceVersion (each
// resource's cache says it), asked when the object is served: an answer says the settled
// version as of the answer, not as of the snapshot.
#include <catch2/catch.hpp>

#include <map>

#include "agent/pipeline/object_views_publisher.h"
#include "agent/pipeline/settled_lookup.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

TEST_CASE("the snapshot asks the settled resourceVersion of each object by resource and uid, when served") {
  TempDir dir;
  FakeClock clock;
  auto store = std::move(SqliteStateStore::Open(dir.File("state.db"), "node-a", {})).value();
  std::map<std::string, std::string> settled{{"uid-a", "17"}};
  ObjectViewsPublisherOptions options;
  options.settled_version = [&settled](std::string_view resource, const std::string& uid) {
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
  REQUIRE(views->settled_version);
  const SnapshotObject& a = *views->objects[0];
  const SnapshotObject& b = *views->objects[1];
  CHECK(views->settled_version(a.resource, a.uid.str()) == "17");
  CHECK(views->settled_version(b.resource, b.uid.str()).empty());

  // b settles after the snapshot was taken, with no store change (nothing was left to do): the
  // same snapshot serves it.
  settled["uid-b"] = "18";
  CHECK(views->settled_version(b.resource, b.uid.str()) == "18");
}

}  // namespace
}  // namespace nodehook

namespace nodehook {
namespace {

TEST_CASE("a snapshot that outlives its agent's caches answers no settled version, without reading them") {
  int reads = 0;
  auto lookup = std::make_shared<SettledLookup>([&reads](std::string_view, const std::string& uid) {
    ++reads;
    return uid == "uid-a" ? std::string("17") : std::string();
  });
  ObjectViewsSnapshot snapshot;  // what an HTTP answer may still hold while the agent stops
  snapshot.settled_version = [lookup](std::string_view resource, const std::string& uid) {
    return (*lookup)(resource, uid);
  };
  CHECK(snapshot.settled_version("widgets.example.com/v1", "uid-a") == "17");
  lookup->Detach();  // ~Agent
  CHECK(snapshot.settled_version("widgets.example.com/v1", "uid-a").empty());
  CHECK(reads == 1);
}

}  // namespace
}  // namespace nodehook
