// NameThisThread: names the calling thread as `top -H`, `ps -L`, perf and /proc/<pid>/task/*/comm
// show it ("nh-worker-2"), so the agent's CPU can be told apart per thread. Linux keeps 15
// bytes; a longer name is cut. Thread-safe (names only the caller).
#pragma once

#include <pthread.h>

#include <string>

namespace nodehook {

inline void NameThisThread(std::string name) {
  if (name.size() > 15) name.resize(15);
  pthread_setname_np(pthread_self(), name.c_str());
}

}  // namespace nodehook
