#include <catch2/catch.hpp>

#include "agent/queue/retry_inbox.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::vector<std::string> Keys(const std::vector<RetryAsk>& asks) {
  std::vector<std::string> out;
  for (const auto& a : asks) out.push_back(a.uid + "/" + (a.handler.empty() ? "*" : a.handler));
  return out;
}

TEST_CASE("retry requests for one object merge, and one for every handler absorbs the others") {
  FakeClock clock;
  RetryInbox inbox(clock, RetryInboxOptions{seconds(2), 10});
  REQUIRE(inbox.Offer("a", "create").ok());
  REQUIRE(inbox.Offer("a", "create").ok());
  REQUIRE(inbox.Offer("a", "delete").ok());
  REQUIRE(inbox.Offer("b", "delete").ok());
  REQUIRE(inbox.Offer("b", "").ok());
  REQUIRE(inbox.Offer("b", "create").ok());
  TimePoint next = clock.Now() + seconds(60);
  CHECK(Keys(inbox.TakeDue(&next)) == std::vector<std::string>{"a/create", "a/delete", "b/*"});
  CHECK(inbox.TakeDue(&next).empty());
}

TEST_CASE("a caller in a loop gets an object retried at most once per interval, and its last request still counts") {
  FakeClock clock;
  RetryInbox inbox(clock, RetryInboxOptions{seconds(2), 10});
  TimePoint next = clock.Now() + seconds(60);
  size_t handed_out = 0;
  // 300 requests over 3 s, the housekeeping thread looking after each.
  for (int i = 0; i < 300; ++i) {
    REQUIRE(inbox.Offer("a", "").ok());
    handed_out += inbox.TakeDue(&next).size();
    clock.Advance(milliseconds(10));
  }
  CHECK(handed_out == 2);  // at 0 s and at 2 s
  // The requests after the last hand-out are still waiting, due when the interval ends.
  next = clock.Now() + seconds(60);
  CHECK(inbox.TakeDue(&next).empty());
  CHECK(next == FromMillis(1'700'000'000'000) + seconds(4));
  clock.Advance(next - clock.Now());
  CHECK(Keys(inbox.TakeDue(&next)) == std::vector<std::string>{"a/*"});
}

TEST_CASE("objects beyond the inbox capacity are refused, requests for waiting ones still merge") {
  FakeClock clock;
  RetryInbox inbox(clock, RetryInboxOptions{seconds(2), 2});
  REQUIRE(inbox.Offer("a", "").ok());
  REQUIRE(inbox.Offer("b", "").ok());
  CHECK(inbox.Offer("c", "").code() == StatusCode::kTooManyRequests);
  CHECK(inbox.Offer("a", "delete").ok());
}

TEST_CASE("a request put back after a failed store write is handed out again after the interval") {
  FakeClock clock;
  RetryInbox inbox(clock, RetryInboxOptions{seconds(2), 1});
  REQUIRE(inbox.Offer("a", "update").ok());
  TimePoint next = clock.Now() + seconds(60);
  auto taken = inbox.TakeDue(&next);
  REQUIRE(taken.size() == 1);
  REQUIRE(inbox.Offer("b", "").ok());  // fills the inbox
  inbox.PutBack(taken[0]);             // never refused
  clock.Advance(seconds(2));
  CHECK(Keys(inbox.TakeDue(&next)) == std::vector<std::string>{"a/update", "b/*"});
}

TEST_CASE("an accepted offer wakes the consumer, a refused one does not") {
  FakeClock clock;
  RetryInbox inbox(clock, RetryInboxOptions{seconds(2), 1});
  int wakes = 0;
  inbox.SetWaker([&] { ++wakes; });
  REQUIRE(inbox.Offer("a", "").ok());
  REQUIRE_FALSE(inbox.Offer("b", "").ok());
  CHECK(wakes == 1);
}

}  // namespace
}  // namespace nodehook
