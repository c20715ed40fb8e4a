#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "agent/periodic/check_timing.h"

using namespace nodehook;

namespace {
const Duration kInterval{600'000};
const TimePoint kNow = FromMillis(1'700'000'000'000);
}  // namespace

TEST_CASE("a node's first checks spread its objects over the whole interval") {
  std::vector<Duration> offsets;
  for (int i = 0; i < 200; ++i) offsets.push_back(FirstCheckDue(kNow, "node-a", "uid-" + std::to_string(i), kInterval) - kNow);
  for (Duration d : offsets) {
    CHECK(d >= Duration::zero());
    CHECK(d < kInterval);
  }
  CHECK(*std::min_element(offsets.begin(), offsets.end()) < kInterval / 10);
  CHECK(*std::max_element(offsets.begin(), offsets.end()) > kInterval * 9 / 10);
  CHECK(std::set<Duration>(offsets.begin(), offsets.end()).size() > 190);
}

TEST_CASE("one object's first check falls at a different point of the interval on each node") {
  std::set<Duration> offsets;
  for (int n = 0; n < 20; ++n) offsets.insert(StableOffset("node-" + std::to_string(n), "same-uid", kInterval));
  CHECK(offsets.size() == 20);
  CHECK(StableOffset("node-a", "u1", kInterval) == StableOffset("node-a", "u1", kInterval));
}

TEST_CASE("the next check comes one interval after the last start, stretched by at most the jitter") {
  TimePoint start = kNow;
  CHECK(NextCheckDue(start, kInterval, 10, 0.5) - start == kInterval);
  CHECK(NextCheckDue(start, kInterval, 10, 0.0) - start == kInterval * 9 / 10);
  CHECK(NextCheckDue(start, kInterval, 10, 0.999999) - start <= kInterval * 11 / 10);
  CHECK(NextCheckDue(start, kInterval, 0, 0.9) - start == kInterval);
}

TEST_CASE("a check due later is kept across a restart, one overdue runs once within the overdue spread") {
  TimePoint later = kNow + Duration(120'000);
  CHECK(ResumedCheckDue(later, kNow, "node-a", "u1", kInterval) == later);
  std::set<Duration> overdue;
  for (int i = 0; i < 50; ++i) {
    TimePoint due = ResumedCheckDue(kNow - Duration(3'600'000), kNow, "node-a", "u" + std::to_string(i), kInterval);
    CHECK(due >= kNow);
    CHECK(due < kNow + kOverdueSpread);
    overdue.insert(due - kNow);
  }
  CHECK(overdue.size() > 45);  // spread out, not a burst at the start
}

TEST_CASE("a stored due time far in the future (clock set back) waits at most one interval") {
  TimePoint far = kNow + kInterval * 100;
  CHECK(ResumedCheckDue(far, kNow, "node-a", "u1", kInterval) == kNow + kInterval);
}
