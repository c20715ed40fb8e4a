#include <catch2/catch.hpp>

#include "storage/sqlite_state_store.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

using namespace nodehook;

namespace {

HandlerRecord Handler(const std::string& uid, const std::string& resource, int retries, const std::string& outcome,
                      int64_t first_start_ms) {
  HandlerRecord r;
  r.uid = uid;
  r.handler = "create";
  r.resource = resource;
  r.namespace_name = "ns";
  r.name = uid;
  r.retries = retries;
  r.first_start_ms = first_start_ms;
  r.last_outcome = outcome;
  return r;
}

}  // namespace

TEST_CASE("the store summary counts retrying and permanently failed handlers per resource, and rows per table") {
  auto store = SqliteStateStore::Open(":memory:", "node-a", StoreOptions{});
  REQUIRE(store.ok());
  auto& s = **store;
  REQUIRE(s.RecordAttempt(Handler("u1", "widgets", 1, "failed", 5000)).ok());
  REQUIRE(s.RecordAttempt(Handler("u2", "widgets", 3, "retry_later", 2000)).ok());
  REQUIRE(s.RecordAttempt(Handler("u3", "widgets", 4, "permanent_failure", 1000)).ok());
  REQUIRE(s.RecordAttempt(Handler("u4", "widgets", 0, "in_progress", 500)).ok());  // not a failure
  REQUIRE(s.RecordAttempt(Handler("u5", "gadgets", 0, "running", 100)).ok());
  EventRecord event;
  event.uid = "u6";
  event.resource = "gadgets";
  event.type = "ADDED";
  event.observed_at_ms = 700;
  REQUIRE(s.AppendEvent(event).ok());
  auto seq = s.PendingEvents("u6");
  REQUIRE(seq.ok());
  REQUIRE(s.RecordEventAttempt(seq->front().seq, 1, 9000, "failed").ok());

  auto summary = s.Summarize();
  REQUIRE(summary.ok());
  const HandlerCounts& widgets = summary->by_resource.at("widgets");
  REQUIRE(widgets.pending_retry == 2);
  REQUIRE(widgets.failed_permanently == 1);
  REQUIRE(widgets.oldest_pending_since_ms == 2000);
  const HandlerCounts& gadgets = summary->by_resource.at("gadgets");
  REQUIRE(gadgets.pending_retry == 1);  // the retrying event
  REQUIRE(gadgets.oldest_pending_since_ms == 700);
  REQUIRE(summary->rows.at("handlers") == 5);
  REQUIRE(summary->rows.at("events") == 1);
  REQUIRE(summary->rows.at("objects") == 0);
}

TEST_CASE("another node's rows are not in this node's summary") {
  auto store = SqliteStateStore::Open(":memory:", "node-b", StoreOptions{});
  REQUIRE(store.ok());
  auto summary = (*store)->Summarize();
  REQUIRE(summary.ok());
  REQUIRE(summary->by_resource.empty());
  REQUIRE(summary->rows.at("handlers") == 0);
}

TEST_CASE("every committed write transaction is observed in the commit histogram") {
  Metrics metrics;
  StoreOptions options;
  options.metrics = &metrics;
  auto store = SqliteStateStore::Open(":memory:", "node-a", options);
  REQUIRE(store.ok());
  Histogram& commits = metrics.GetHistogram("store_commit_duration_seconds", "");
  uint64_t before = commits.count();
  REQUIRE((*store)->RecordAttempt(Handler("u1", "widgets", 1, "failed", 1)).ok());
  REQUIRE((*store)->Forget("u1").ok());
  REQUIRE(commits.count() == before + 2);
}

TEST_CASE("the stamp moves with every write, this store's or another process's, and only then") {
  TempDir dir;
  const std::string path = dir.File("state.db");
  auto store = OpenStore(path);
  auto before = store->Stamp();
  REQUIRE(before);
  REQUIRE(store->Summarize().ok());  // reads move nothing
  REQUIRE(store->ListAllHandlers().ok());
  CHECK(store->Stamp() == before);

  REQUIRE(store->RecordAttempt(Handler("u1", "widgets", 1, "failed", 5000)).ok());
  auto own = store->Stamp();
  REQUIRE(own);
  CHECK(*own != *before);

  // `nodehook state retry` from outside the agent: another connection to the same file.
  RawExec(path, "outside", {"UPDATE handlers SET retries = 0, last_outcome = 'permanent_failure' WHERE uid = 'u1'"});
  auto outside = store->Stamp();
  REQUIRE(outside);
  CHECK(*outside != *own);
  CHECK(store->Stamp() == outside);
}

TEST_CASE("a summary is counted again when another process wrote to the file, not only this store") {
  TempDir dir;
  const std::string path = dir.File("state.db");
  auto store = OpenStore(path);
  REQUIRE(store->RecordAttempt(Handler("u1", "widgets", 1, "failed", 5000)).ok());
  auto first = store->Summarize();
  REQUIRE(first.ok());
  CHECK(first->by_resource.at("widgets").pending_retry == 1);
  CHECK(store->Summarize()->by_resource.at("widgets").pending_retry == 1);  // unchanged: the same counts

  RawExec(path, "outside", {"UPDATE handlers SET last_outcome = 'permanent_failure' WHERE uid = 'u1'"});
  auto after = store->Summarize();
  REQUIRE(after.ok());
  CHECK(after->by_resource.at("widgets").pending_retry == 0);
  CHECK(after->by_resource.at("widgets").failed_permanently == 1);

  REQUIRE(store->RecordAttempt(Handler("u2", "widgets", 2, "failed", 6000)).ok());
  CHECK(store->Summarize()->by_resource.at("widgets").pending_retry == 1);
  CHECK(store->Summarize()->rows.at("handlers") == 2);
}
