// DepartedSweeper keeps only deleting objects with some node's finalizer, sweeps each when it
// changes or a node departs, and looks again at each after `recheck` while it stays.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "agent/steward/departed_sweeper.h"
#include "test/fakes/fake_clock.h"

using namespace nodehook;
using std::chrono::seconds;

namespace {

class CountingSweeps final : public FinalizerSteps {
 public:
  const std::string& Name() const override { return name_; }
  Status Claim(const WatchedResource&, const KubeObject&, const ObjectFacts&) override { return Status::Ok(); }
  Status Release(const WatchedResource&, const KubeObject&, const ObjectFacts&) override { return Status::Ok(); }
  Status SweepDeparted(const WatchedResource&, const KubeObject& object, const ObjectFacts&) override {
    std::lock_guard<std::mutex> lock(mu_);
    swept_.push_back(object.meta.name);
    return Status::Ok();
  }
  std::vector<std::string> swept() const {
    std::lock_guard<std::mutex> lock(mu_);
    return swept_;
  }

 private:
  std::string name_;
  mutable std::mutex mu_;
  std::vector<std::string> swept_;
};

ObjectPtr Object(const std::string& name, bool deleting, const std::string& finalizers) {
  auto o = std::make_shared<KubeObject>();
  o->meta = ObjectMeta{"uid-" + name, "ns", name, "1", deleting};
  o->json = R"({"metadata":{"name":")" + name + R"(","finalizers":)" + finalizers + "}}";
  return o;
}

}  // namespace

TEST_CASE("only deleting objects with some node's finalizer are kept") {
  WatchedResource resource;
  CountingSweeps steps;
  FakeClock clock;
  DepartedSweeper sweeper(resource, steps, clock, seconds(10));
  sweeper.OnListed({Object("live", false, R"(["nodehook.io/a"])"), Object("singleton", true, R"(["nodehook.io/singleton"])"),
                    Object("other", true, R"(["example.com/x"])"), Object("leaving", true, R"(["nodehook.io/a"])")},
                   {});
  CHECK(sweeper.pending() == 1);
  sweeper.OnObject(Object("leaving", true, R"(["example.com/x"])"));  // its node finalizer came off
  CHECK(sweeper.pending() == 0);
  sweeper.OnObject(Object("late", true, R"(["nodehook.io/b"])"));
  CHECK(sweeper.pending() == 1);
  sweeper.OnDeleted(Object("late", true, R"(["nodehook.io/b"])"));
  CHECK(sweeper.pending() == 0);
}

TEST_CASE("each kept object is swept at once, again after recheck, and at once when a node departs") {
  WatchedResource resource;
  CountingSweeps steps;
  FakeClock clock;
  DepartedSweeper sweeper(resource, steps, clock, seconds(10));
  CancelToken stop;
  std::thread runner([&] { sweeper.Run(stop); });
  // Waits until the loop is asleep again after the clock moved (or something woke it).
  auto asleep_after = [&](const std::function<void()>& move) {
    size_t sleeps = clock.sleeps();
    move();
    while (clock.sleeps() == sleeps) std::this_thread::yield();
  };
  while (clock.sleeps() == 0) std::this_thread::yield();  // asleep with nothing kept
  asleep_after([&] { sweeper.OnObject(Object("w", true, R"(["nodehook.io/a","nodehook.io/b"])")); });
  CHECK(steps.swept() == std::vector<std::string>{"w"});
  asleep_after([&] { clock.Advance(seconds(9)); });
  CHECK(steps.swept().size() == 1);
  asleep_after([&] { clock.Advance(seconds(1)); });
  CHECK(steps.swept().size() == 2);
  asleep_after([&] { sweeper.Wake(); });
  CHECK(steps.swept().size() == 3);
  stop.Cancel();
  runner.join();
}
