#include "agent/process/scratch_pool.h"

namespace nodehook {

Result<ScratchDir> ScratchPool::Acquire() {
  {
    MutexLock lock(&mu_);
    if (!idle_.empty()) {
      ScratchDir dir = std::move(idle_.back());
      idle_.pop_back();
      return dir;
    }
  }
  return ScratchDir::Create(work_dir_);
}

Status ScratchPool::Release(ScratchDir dir) {
  if (dir.ClearForReuse()) {
    MutexLock lock(&mu_);
    if (idle_.size() < kMaxIdle) {
      idle_.push_back(std::move(dir));
      return Status::Ok();
    }
  }
  return dir.Remove();
}

size_t ScratchPool::IdleCount() {
  MutexLock lock(&mu_);
  return idle_.size();
}

}  // namespace nodehook
