// ReconcilerParts: what a Reconciler (and the periodic runners) work with in a test: a FakeClock, a
// FakeRunner, an in-memory state store for node-a, one resource's cache, a stop token, and a hook
// work directory removed at the end. Fixtures derive from it and add their retry policy, outcome
// reporter and reconciler. TestRetryOptions: the retries those tests use. Single-threaded.
#pragma once

#include <memory>
#include <string>

#include "agent/base/cancel.h"
#include "agent/reconcile/reconciler.h"
#include "agent/watch/object_cache.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_runner.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {

// Retries after 1 s, doubling up to 8 s.
inline RetryOptions TestRetryOptions() {
  RetryOptions o;
  o.base = Duration(1000);
  o.max = Duration(8000);
  return o;
}

struct ReconcilerParts {
  FakeClock clock;
  FakeRunner runner;
  std::unique_ptr<SqliteStateStore> store = std::move(SqliteStateStore::Open(":memory:", "node-a", {})).value();
  ObjectCache cache;
  CancelToken stop;
  TempDir work;
  const std::string work_dir = work.path();  // where hooks' old/new/diff files go
};

}  // namespace nodehook
