// ScratchPool: scratch directories reused across hook runs instead of made and removed for each
// (mkdtemp, open, stat and rmdir per run). A run takes a directory no other run holds and gives
// it back once its hook has exited; it is kept only when ScratchDir::ClearForReuse finds it our
// own, private and empty after the run's files are unlinked. Anything the hook left there gets
// the directory removed (link-safely, remove_tree.h) instead, so no run ever sees another's
// files. So at most as many directories as hooks ever ran at once stay, capped by kMaxIdle;
// those left at exit are swept at the next start like any other.
// Owns its idle directories. Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "agent/base/mutex.h"
#include "agent/process/scratch_dir.h"
#include "agent/base/status.h"

namespace nodehook {

class ScratchPool {
 public:
  static constexpr size_t kMaxIdle = 64;

  explicit ScratchPool(std::string work_dir) : work_dir_(std::move(work_dir)) {}
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  // An empty private directory only the caller holds: an idle one, else a new one.
  Result<ScratchDir> Acquire();
  // Takes `dir` back after its run: kept when it clears for reuse, else removed (the error says
  // what could not be).
  Status Release(ScratchDir dir);

  size_t IdleCount();

 private:
  const std::string work_dir_;
  Mutex mu_;
  std::vector<ScratchDir> idle_ GUARDED_BY(mu_);
};

}  // namespace nodehook
