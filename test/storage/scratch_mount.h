// ScratchTmpfs: a small tmpfs mounted on a fresh temp directory, for tests of a full or
// read-only file system; unmounted and removed on destruction. Needs CAP_SYS_ADMIN (root in the
// test container): when mounting is not allowed, mounted() is false and the test says it skipped
// (MountedOrSkipped). FillDisk fills a file system until it refuses more. Not thread-safe.
#pragma once

#include <cstdio>
#include <string>

#include <sys/mount.h>

#include <catch2/catch.hpp>

#include "test/fakes/temp_dir.h"

namespace nodehook {

class ScratchTmpfs {
 public:
  explicit ScratchTmpfs(const std::string& size = "256k") {
    std::string options = "size=" + size + ",mode=0755";
    mounted_ = mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~ScratchTmpfs() {
    if (mounted_) umount2(dir_.path().c_str(), MNT_DETACH);
  }
  ScratchTmpfs(const ScratchTmpfs&) = delete;
  ScratchTmpfs& operator=(const ScratchTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  // mounted(); when not, the test says it skipped, and returns.
  bool MountedOrSkipped() const {
    if (!mounted_) WARN("skipped: mounting a tmpfs is not permitted here");
    return mounted_;
  }
  std::string File(const std::string& name) const { return dir_.File(name); }
  const std::string& path() const { return dir_.path(); }

  // Remounts read-only (true) or read-write (false); false when the kernel refused.
  bool SetReadOnly(bool read_only) {
    unsigned long flags = MS_REMOUNT | (read_only ? MS_RDONLY : 0);
    return mount("tmpfs", dir_.path().c_str(), "tmpfs", flags, nullptr) == 0;
  }

 private:
  TempDir dir_;
  bool mounted_ = false;
};

// Fills the file system holding `path` by writing `path` until the disk refuses more.
inline void FillDisk(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::string chunk(4096, 'f');
  while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size() && std::fflush(f) == 0) {
  }
  std::fclose(f);
}

}  // namespace nodehook
