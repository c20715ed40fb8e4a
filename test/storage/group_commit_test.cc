#include <catch2/catch.hpp>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/group_commit.h"

namespace nodehook {
namespace {

// A batch runner that records its groups, holds the first one until released, and fails the
// groups it is told to. "Committed" is what a writer may rely on once Submit returned.
class RecordingRunner {
 public:
  Status Run(const std::vector<const GroupCommit::Write*>& writes, const std::string& operation) {
    std::unique_lock<std::mutex> lock(mu_);
    const size_t group = sizes_.size();
    sizes_.push_back(writes.size());
    operations_.push_back(operation);
    started_.notify_all();
    if (group == 0) released_.wait(lock, [&] { return release_first_; });
    lock.unlock();
    Status status;
    for (const GroupCommit::Write* write : writes) {
      Status one = (*write)();
      if (status.ok() && !one.ok()) status = one;
    }
    lock.lock();
    if (status.ok() && fail_group_ == static_cast<int>(group)) status = UnavailableError("disk full");
    if (status.ok()) committed_.push_back(group);
    return status;
  }
  void WaitForFirstGroup() {
    std::unique_lock<std::mutex> lock(mu_);
    started_.wait(lock, [&] { return !sizes_.empty(); });
  }
  void ReleaseFirst() {
    std::lock_guard<std::mutex> lock(mu_);
    release_first_ = true;
    released_.notify_all();
  }
  void FailGroup(int group) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_group_ = group;
  }
  std::vector<std::string> operations() {
    std::lock_guard<std::mutex> lock(mu_);
    return operations_;
  }
  std::vector<size_t> sizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_;
  }
  bool Committed(size_t group) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t g : committed_) {
      if (g == group) return true;
    }
    return false;
  }

 private:
  std::mutex mu_;
  std::condition_variable started_, released_;
  bool release_first_ = false;
  int fail_group_ = -1;
  std::vector<size_t> sizes_;
  std::vector<std::string> operations_;
  std::vector<size_t> committed_;
};

// Starts `count` writers behind a leader whose group is held, and waits until all are queued.
struct Lineup {
  RecordingRunner runner;
  GroupCommit group{[this](const std::vector<const GroupCommit::Write*>& w, const std::string& operation) {
    return runner.Run(w, operation);
  }};
  std::vector<std::thread> threads;
  std::vector<Status> results;
  std::vector<size_t> group_of;  // the group each writer's write ran in
  std::vector<char> committed_at_return;  // Catch2 assertions are not thread-safe: checked after
  size_t failing_writer;

  explicit Lineup(size_t followers, size_t failing = SIZE_MAX)
      : results(followers + 1), group_of(followers + 1), committed_at_return(followers + 1), failing_writer(failing) {
    Start(0);
    runner.WaitForFirstGroup();
    for (size_t i = 1; i <= followers; ++i) Start(i);
    // Spinning on the queue (not sleeping): the writers are queued once they are counted.
    while (group.QueuedForTesting() < followers + 1) std::this_thread::yield();
  }
  void Start(size_t i) {
    threads.emplace_back([this, i] {
      GroupCommit::Write write = [this, i] {
        group_of[i] = runner.sizes().size() - 1;
        return i == failing_writer ? InvalidError("sqlite RecordHandled: constraint failed") : Status::Ok();
      };
      results[i] = group.Submit(i % 2 == 0 ? "RecordAttempt" : "RecordHandled", write);
      committed_at_return[i] = runner.Committed(group_of[i]) ? 1 : 0;
    });
  }
  void Finish() {
    runner.ReleaseFirst();
    for (auto& t : threads) t.join();
  }
};

TEST_CASE("writers that queue while a transaction is open share the next one, each returning after its commit") {
  Lineup lineup(5);
  lineup.Finish();
  // The held leader alone, then the five followers in one transaction, not five.
  REQUIRE(lineup.runner.sizes() == std::vector<size_t>{1, 5});
  for (const Status& s : lineup.results) REQUIRE(s.ok());
  for (size_t i = 1; i <= 5; ++i) REQUIRE(lineup.group_of[i] == 1);
  for (char committed : lineup.committed_at_return) REQUIRE(committed);
  // Errors of a group name every kind of write in it, once, in the order they queued (the
  // followers queue in any order).
  const std::vector<std::string> operations = lineup.runner.operations();
  REQUIRE(operations.size() == 2);
  REQUIRE(operations[0] == "RecordAttempt");
  REQUIRE_THAT(operations[1], Catch::Equals("RecordAttempt+RecordHandled") || Catch::Equals("RecordHandled+RecordAttempt"));
}

TEST_CASE("a failing transaction fails every writer in it and no writer of another group") {
  Lineup lineup(3);
  lineup.runner.FailGroup(1);
  lineup.Finish();
  REQUIRE(lineup.results[0].ok());
  for (size_t i = 1; i <= 3; ++i) {
    REQUIRE_FALSE(lineup.results[i].ok());
    REQUIRE(lineup.results[i].message() == "disk full");
  }
}

TEST_CASE("one failing write fails its whole group, the writers of good writes included") {
  Lineup lineup(3, /*failing=*/2);
  lineup.Finish();
  REQUIRE(lineup.results[0].ok());
  for (size_t i = 1; i <= 3; ++i) {
    REQUIRE(lineup.results[i].message() == "sqlite RecordHandled: constraint failed");
    REQUIRE_FALSE(lineup.committed_at_return[i]);
  }
  REQUIRE(lineup.group.QueuedForTesting() == 0);
}

}  // namespace
}  // namespace nodehook
