// ScratchTmpfs: a small tmpfs mounted on a fresh temp directory, for tests of a full or
// read-only file system; unmounted and removed on destruction. Needs CAP_SYS_ADMIN (root in the
// test container): when mounting is not allowed, mounted() is false and the test says it skipped.
// Not thread-safe.
#pragma once

#include <string>

#include <sys/mount.h>

#include "test/storage/temp_dir.h"

namespace nodehook {

class ScratchTmpfs {
 public:
  explicit ScratchTmpfs(const std::string& size = "256k") {
    std::string options = "size=" + size + ",mode=0755";
    mounted_ = mount("tmpfs", dir_.Path().c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~ScratchTmpfs() {
    if (mounted_) umount2(dir_.Path().c_str(), MNT_DETACH);
  }
  ScratchTmpfs(const ScratchTmpfs&) = delete;
  ScratchTmpfs& operator=(const ScratchTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  std::string File(const std::string& name) const { return dir_.File(name); }
  std::string Path() const { return dir_.Path(); }

  // Remounts read-only (true) or read-write (false); false when the kernel refused.
  bool SetReadOnly(bool read_only) {
    unsigned long flags = MS_REMOUNT | (read_only ? MS_RDONLY : 0);
    return mount("tmpfs", dir_.Path().c_str(), "tmpfs", flags, nullptr) == 0;
  }

 private:
  TempDir dir_;
  bool mounted_ = false;
};

}  // namespace nodehook
