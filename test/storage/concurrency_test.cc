#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

TEST_CASE("several threads using the store at once all succeed") {
  TempDir dir;
  // Two connections on one file, so both the store's mutex and SQLite's locking are exercised.
  auto first = OpenStore(dir.File("state.db"));
  auto second = OpenStore(dir.File("state.db"));
  constexpr int kThreads = 4;
  constexpr int kObjectsPerThread = 50;
  std::atomic<int> failures{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    StateStore* store = (t % 2 == 0) ? first.get() : second.get();
    threads.emplace_back([store, t, &failures] {
      for (int i = 0; i < kObjectsPerThread; ++i) {
        std::string uid = "t" + std::to_string(t) + "-" + std::to_string(i);
        bool ok = store->RecordAttempt(SampleHandler(uid, "create")).ok() &&
                  store->RecordAttempt(SampleHandler(uid, "event")).ok() &&
                  store->RecordHandled(SampleObject(uid), "create").ok() &&
                  store->GetObject(uid).ok() && store->ListAllHandlers().ok();
        if (i % 5 == 0) ok = ok && store->Forget(uid).ok();
        if (!ok) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();

  CHECK(failures == 0);
  // Every fifth object was forgotten; the rest keep their diffbase and their "event" handler.
  constexpr int kKept = kThreads * (kObjectsPerThread - kObjectsPerThread / 5);
  CHECK(first->ListObjects("widgets.example.com/v1")->size() == kKept);
  auto handlers = second->ListAllHandlers();
  REQUIRE(handlers.ok());
  CHECK(handlers->size() == kKept);
  for (const auto& h : *handlers) CHECK(h.handler == "event");
}

}  // namespace
}  // namespace nodehook
