#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <memory>
#include <thread>

#include "agent/base/cancel.h"

using namespace nodehook;

namespace {

// A flag one thread raises and another waits for.
class Signal {
 public:
  void Raise() {
    std::lock_guard<std::mutex> lock(mu_);
    raised_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return raised_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool raised_ = false;
};

}  // namespace

TEST_CASE("callbacks run once on cancel; one registered after it runs at once") {
  CancelToken token;
  int runs = 0;
  CancelRegistration first(token, [&] { ++runs; });
  token.Cancel();
  token.Cancel();
  REQUIRE(runs == 1);
  CancelRegistration late(token, [&] { ++runs; });
  REQUIRE(runs == 2);
}

TEST_CASE("a callback whose registration ended does not run") {
  CancelToken token;
  bool ran = false;
  { CancelRegistration gone(token, [&] { ran = true; }); }
  token.Cancel();
  REQUIRE_FALSE(ran);
}

// The operation that registered a callback may end (and free what the callback captured) while
// Cancel() runs that callback on another thread: ending the registration must wait for it.
TEST_CASE("ending a registration waits for its callback running on another thread") {
  for (int round = 0; round < 50; ++round) {
    CancelToken token;
    Signal started, ending;
    std::atomic<bool> finished{false};
    std::unique_ptr<CancelRegistration> registration;
    registration = std::make_unique<CancelRegistration>(token, [&] {
      started.Raise();
      ending.Wait();
      finished = true;
    });
    std::thread canceller([&] { token.Cancel(); });
    started.Wait();
    ending.Raise();
    registration.reset();
    REQUIRE(finished);
    canceller.join();
  }
}

TEST_CASE("a callback may end its own registration without waiting for itself") {
  CancelToken token;
  std::unique_ptr<CancelRegistration> registration;
  bool ran = false;
  registration = std::make_unique<CancelRegistration>(token, [&] {
    registration.reset();
    ran = true;
  });
  token.Cancel();
  REQUIRE(ran);
}
