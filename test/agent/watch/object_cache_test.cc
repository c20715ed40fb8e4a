#include <catch2/catch.hpp>

#include "agent/object/essence.h"
#include "agent/watch/object_cache.h"

using namespace nodehook;

namespace {

ObjectPtr Obj(const std::string& uid, const std::string& rv) {
  auto o = std::make_shared<KubeObject>();
  o->meta = {uid, "ns", "w-" + uid, rv, false};
  o->json = R"({"metadata":{"uid":")" + uid + R"("},"spec":{"rv":")" + rv + R"("}})";
  return o;
}

// The cache holds `uid`'s bytes at `rv`, unhandled (no metadata kept in their place).
void RequireBytes(const ObjectCache& cache, const std::string& uid, const std::string& rv) {
  auto entry = cache.Get(uid);
  REQUIRE(entry);
  REQUIRE(entry->object);
  REQUIRE(entry->object->meta.resource_version == rv);
  REQUIRE_FALSE(entry->handled_meta);
}

}  // namespace

TEST_CASE("a handled object's bytes leave the cache, its metadata stays") {
  ObjectCache cache;
  cache.Upsert(Obj("a", "1"));
  REQUIRE(cache.with_bytes() == 1);
  cache.DropBytes("a", "1");
  REQUIRE(cache.with_bytes() == 0);
  auto entry = cache.Get("a");
  REQUIRE(entry);
  REQUIRE(entry->object == nullptr);
  REQUIRE_FALSE(entry->gone);
  REQUIRE(entry->handled_meta);
  REQUIRE(entry->handled_meta->uid == "a");
  REQUIRE(entry->handled_meta->Key() == "ns/w-a");
  REQUIRE(entry->handled_meta->resource_version == "1");
}

TEST_CASE("bytes are not dropped when a newer state arrived after the one that was handled") {
  ObjectCache cache;
  cache.Upsert(Obj("a", "1"));
  cache.Upsert(Obj("a", "2"));
  cache.DropBytes("a", "1");
  RequireBytes(cache, "a", "2");
}

TEST_CASE("a changed object brings its bytes back, an unchanged one does not") {
  ObjectCache cache;
  cache.Upsert(Obj("a", "1"));
  cache.DropBytes("a", "1");
  REQUIRE_FALSE(cache.Upsert(Obj("a", "1")));  // the same resourceVersion again (a replayed event)
  REQUIRE(cache.with_bytes() == 0);
  REQUIRE(cache.Upsert(Obj("a", "2")));
  RequireBytes(cache, "a", "2");
}

TEST_CASE("a relist keeps unchanged handled objects without their bytes and reports only changes") {
  ObjectCache cache;
  cache.Replace({Obj("a", "1"), Obj("b", "1"), Obj("c", "1")});
  cache.DropBytes("a", "1");
  cache.DropBytes("b", "1");
  cache.DropBytes("c", "1");
  auto changed = cache.Replace({Obj("a", "1"), Obj("b", "2")});
  std::sort(changed.begin(), changed.end());
  REQUIRE(changed == std::vector<std::string>{"b", "c"});
  REQUIRE(cache.with_bytes() == 1);  // b, changed
  REQUIRE(cache.Get("a")->handled_meta);
  REQUIRE(cache.Get("c")->gone);
}

TEST_CASE("a tombstone keeps its bytes, and a gone object's bytes are never dropped") {
  ObjectCache cache;
  cache.Upsert(Obj("a", "1"));
  cache.MarkGone("a", Obj("a", "2"));
  cache.DropBytes("a", "2");
  REQUIRE(cache.Get("a")->object);
  REQUIRE(cache.Contains("a"));
  REQUIRE_FALSE(cache.Contains("b"));
}

TEST_CASE("an entry keeps what the reconciler settled it at, through relists and dropped bytes") {
  ObjectCache cache;
  cache.Upsert(Obj("a", "1"));
  CHECK_FALSE(cache.Settled("a"));  // first sight
  const std::string digest = EssenceDigest(R"({"spec":{"rv":"1"}})");
  cache.MarkSettled("a", "1", digest);
  cache.DropBytes("a", "1");
  cache.Replace({Obj("a", "1")});
  auto settled = cache.Settled("a");
  REQUIRE(settled);
  CHECK(settled->resource_version == "1");
  CHECK(settled->digest == digest);  // held as its value, given back as EssenceDigest wrote it
  CHECK(cache.Get("a")->settled->digest == digest);

  // A plan without facts (bytes dropped) settles the same version again: the digest stays.
  cache.MarkSettled("a", "1", "");
  CHECK(cache.Settled("a")->digest == digest);
  // A newer state is not settled until the reconciler says so; then without facts, no digest.
  cache.Upsert(Obj("a", "2"));
  CHECK(cache.Settled("a")->resource_version == "1");
  cache.MarkSettled("a", "2", "");
  CHECK(cache.Settled("a")->resource_version == "2");
  CHECK(cache.Settled("a")->digest.empty());
  // Only EssenceDigest's form is a digest.
  cache.MarkSettled("a", "3", "not-a-digest");
  CHECK(cache.Settled("a")->digest.empty());
}

TEST_CASE("the settled version stays when the latest state moves on, whichever way it comes") {
  // At rest the entry keeps the settled version as the latest state's; these are the ways the
  // latest state changes under it.
  ObjectCache cache;
  cache.Upsert(Obj("a", "1"));
  cache.MarkSettled("a", "1", "");
  cache.DropBytes("a", "1");
  cache.Replace({Obj("a", "2")});  // a relist brings a newer version in place of dropped bytes
  CHECK(cache.Settled("a")->resource_version == "1");
  cache.MarkSettled("a", "2", "");
  cache.MarkGone("a", Obj("a", "3"));  // deleted, last seen at a newer version
  CHECK(cache.Settled("a")->resource_version == "2");
  cache.Replace({Obj("a", "4")});  // back (a relist found it after all)
  CHECK(cache.Settled("a")->resource_version == "2");

  // Settled at an older version than the latest (a newer one came during the reconcile), then
  // at the latest, then the latest moves on again.
  cache.Upsert(Obj("b", "1"));
  cache.Upsert(Obj("b", "2"));
  cache.MarkSettled("b", "1", "");
  CHECK(cache.Settled("b")->resource_version == "1");
  cache.MarkSettled("b", "2", "");
  CHECK(cache.Settled("b")->resource_version == "2");
  cache.Upsert(Obj("b", "3"));
  CHECK(cache.Settled("b")->resource_version == "2");
  cache.Upsert(Obj("b", "3"));  // the same version again changes nothing
  CHECK(cache.Settled("b")->resource_version == "2");

  // A tombstone known only from the state store has no version of its own.
  cache.MarkGone("c", nullptr);
  cache.MarkSettled("c", "7", "");
  CHECK(cache.Settled("c")->resource_version == "7");
  cache.MarkGone("c", Obj("c", "8"));
  CHECK(cache.Settled("c")->resource_version == "7");
  CHECK(cache.Get("c")->object->meta.resource_version == "8");
}

TEST_CASE("the settled state goes with Unsettle, and with the entry of a handled deletion") {
  ObjectCache cache;
  cache.MarkSettled("x", "1", "");  // not cached: nothing to keep it with
  CHECK_FALSE(cache.Settled("x"));
  cache.Upsert(Obj("a", "1"));
  cache.MarkSettled("a", "1", "");
  cache.Unsettle("a");
  CHECK_FALSE(cache.Settled("a"));
  CHECK_FALSE(cache.Get("a")->settled);

  cache.MarkSettled("a", "1", "");
  cache.MarkGone("a", Obj("a", "1"));
  CHECK(cache.Settled("a"));  // a tombstone awaiting its delete hook keeps it
  cache.EraseIfGone("a");
  CHECK_FALSE(cache.Settled("a"));
}
