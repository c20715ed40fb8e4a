// ScopedUmask: sets the process umask for one test and restores the previous one afterwards.
// The umask is process-wide: not for tests that create files on several threads.
#pragma once

#include <sys/stat.h>

namespace nodehook {

class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : previous_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(previous_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t previous_;
};

}  // namespace nodehook
