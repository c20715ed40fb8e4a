#include <catch2/catch.hpp>

#include <future>
#include <string>
#include <thread>

#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/state_lock.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

StateLock MustTake(const std::string& state_file) {
  auto lock = StateLock::TryAcquire(state_file);
  INFO(lock.status().ToString());
  REQUIRE(lock.ok());
  REQUIRE(lock->has_value());
  return std::move(**lock);
}

bool IsFree(const std::string& state_file) {
  auto lock = StateLock::TryAcquire(state_file);
  REQUIRE(lock.ok());
  return lock->has_value();
}

TEST_CASE("a second lock on the same state file is refused while the first is held") {
  TempDir dir;
  std::string file = dir.File("state.db");
  {
    StateLock first = MustTake(file);
    CHECK(first.lock_path() == file + ".lock");
    CHECK_FALSE(IsFree(file));  // a separate open file description, as a second agent would have
  }
  CHECK(IsFree(file));
}

TEST_CASE("locks on different state files do not interfere") {
  TempDir dir;
  StateLock a = MustTake(dir.File("a.db"));
  CHECK(IsFree(dir.File("b.db")));
}

TEST_CASE("the holder names itself in the lock file, and a released lock names nobody") {
  TempDir dir;
  std::string file = dir.File("state.db");
  {
    StateLock held = MustTake(file);
    CHECK(StateLock::DescribeHolder(file).rfind("pid " + std::to_string(getpid()) + " on host ", 0) == 0);
  }
  CHECK(StateLock::DescribeHolder(file) == "unknown");
}

TEST_CASE("the lock descriptor is not inherited by programs the agent runs") {
  TempDir dir;
  StateLock held = MustTake(dir.File("state.db"));
  // Find our descriptor of the lock file and check its close-on-exec flag.
  bool found = false;
  for (int fd = 3; fd < 1024; ++fd) {
    char link[64];
    char target[4096];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (std::string(target) != held.lock_path()) continue;
    found = true;
    CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  }
  CHECK(found);
}

TEST_CASE("a waiting agent says once who holds the lock and takes over when it is released") {
  TempDir dir;
  std::string file = dir.File("state.db");
  std::optional<StateLock> first(MustTake(file));
  std::promise<std::string> waiting;
  int waiting_calls = 0;
  CancelToken never;
  auto second = std::async(std::launch::async, [&] {
    return StateLock::Acquire(file, never, [&](const std::string& holder) {
      ++waiting_calls;
      waiting.set_value(holder);
    }, std::chrono::milliseconds(5));
  });
  std::string holder = waiting.get_future().get();
  CHECK(holder.rfind("pid " + std::to_string(getpid()), 0) == 0);
  first.reset();  // the first agent exits

  Result<StateLock> taken = second.get();
  REQUIRE(taken.ok());
  CHECK(waiting_calls == 1);
  CHECK_FALSE(IsFree(file));
}

TEST_CASE("a waiting agent stops waiting when it is cancelled") {
  TempDir dir;
  std::string file = dir.File("state.db");
  StateLock first = MustTake(file);
  CancelToken stop;
  auto second = std::async(std::launch::async, [&] {
    return StateLock::Acquire(file, stop, [&](const std::string&) { stop.Cancel(); });
  });
  Result<StateLock> result = second.get();
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kCancelled);
  CHECK(result.status().message() == "stopped while waiting for the lock on " + file + ".lock");
}

TEST_CASE("a holder killed with SIGKILL leaves no stale lock") {
  TempDir dir;
  std::string file = dir.File("state.db");
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto lock = StateLock::TryAcquire(file);
    char ok = (lock.ok() && lock->has_value()) ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(2);
    while (true) pause();  // hold the lock until killed
  }
  close(ready[1]);
  char ok = 0;
  REQUIRE(read(ready[0], &ok, 1) == 1);
  close(ready[0]);
  REQUIRE(ok == 'y');

  CHECK_FALSE(IsFree(file));
  CHECK(StateLock::DescribeHolder(file).rfind("pid " + std::to_string(child) + " on host ", 0) == 0);

  kill(child, SIGKILL);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  // The kernel released the lock with the process; the next agent takes it at once.
  StateLock next = MustTake(file);
  CHECK(StateLock::DescribeHolder(file).rfind("pid " + std::to_string(getpid()), 0) == 0);
}

TEST_CASE("a lock file that cannot be created is an error naming the path") {
  auto lock = StateLock::TryAcquire("/nonexistent-dir-for-nodehook/state.db");
  REQUIRE_FALSE(lock.ok());
  CHECK(lock.status().code() == StatusCode::kUnavailable);
  CHECK(lock.status().message() ==
        "cannot create /nonexistent-dir-for-nodehook/state.db.lock: No such file or directory");
}

}  // namespace
}  // namespace nodehook
