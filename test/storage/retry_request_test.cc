// RequestRetry as `nodehook state retry` and POST /v1/retry use it: what it makes due, what it
// revives and what it leaves alone; and NodesInFile, which lets the CLI find the node.
#include <catch2/catch.hpp>

#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

constexpr int64_t kNow = 1'700'000'100'000;

HandlerRecord GivenUp(const std::string& uid) {
  HandlerRecord h = SampleHandler(uid, "create");
  h.retries = 5;
  h.last_outcome = kOutcomePermanentFailure;
  h.next_attempt_ms = 0;
  return h;
}

TEST_CASE("a retry revives a permanent failure: due now, marked retry_requested, its retry count kept") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordAttempt(GivenUp("u1")).ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "update")).ok());

  auto retried = store->RequestRetry("u1", "", kNow);
  REQUIRE(retried.ok());
  REQUIRE(retried->size() == 2);
  CHECK((*retried)[0].handler == "create");
  CHECK((*retried)[0].revived);
  CHECK((*retried)[0].retries == 5);
  CHECK((*retried)[1].handler == "update");
  CHECK_FALSE((*retried)[1].revived);

  HandlerRecord create = **store->GetHandler("u1", "create");
  CHECK(create.last_outcome == kOutcomeRetryRequested);
  CHECK(create.next_attempt_ms == kNow);
  CHECK(create.retries == 5);  // at the limit still: one more failure gives up again
  CHECK((*store->GetHandler("u1", "update"))->last_outcome == "failed");
  CHECK(store->TakeRetryRequests()->size() == 1);
}

TEST_CASE("a retry leaves the handlers of a vanished object alone, except its delete") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordAttempt(GivenUp("u1")).ok());
  REQUIRE(store->MarkGone("u1", kNow - 1000).ok());

  auto nothing = store->RequestRetry("u1", "", kNow);
  CHECK(nothing.status().code() == StatusCode::kNotFound);
  CHECK((*store->GetHandler("u1", "create"))->last_outcome == kOutcomePermanentFailure);
  CHECK(store->TakeRetryRequests()->empty());

  HandlerRecord del = SampleHandler("u1", "delete");
  REQUIRE(store->RecordAttempt(del).ok());
  REQUIRE(store->MarkGone("u1", kNow - 1000).ok());  // RecordAttempt cleared the mark
  auto retried = store->RequestRetry("u1", "", kNow);
  REQUIRE(retried.ok());
  REQUIRE(retried->size() == 1);
  CHECK((*retried)[0].handler == "delete");
}

TEST_CASE("the nodes in a file are listed whichever node's store reads it") {
  TempDir dir;
  auto a = OpenStore(dir.File("state.db"), "node-a");
  CHECK(a->NodesInFile()->empty());
  REQUIRE(a->RecordAttempt(SampleHandler("u1", "create")).ok());
  REQUIRE(a->RecordHandled(SampleObject("u2"), "create").ok());
  auto nobody = OpenStore(dir.File("state.db"), "");
  CHECK(*nobody->NodesInFile() == std::vector<std::string>{"node-a"});
  auto b = OpenStore(dir.File("state.db"), "node-b");
  REQUIRE(b->RecordHandled(SampleObject("u3"), "create").ok());
  CHECK(*a->NodesInFile() == std::vector<std::string>{"node-a", "node-b"});
}

}  // namespace
}  // namespace nodehook
