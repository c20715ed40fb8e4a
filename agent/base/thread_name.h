// Thread names as `top -H`, `ps -L`, perf and /proc/<pid>/task/*/comm show them ("nh-worker-2"),
// so the agent's CPU can be told apart per thread. Linux keeps 15 bytes; a longer name is cut.
//   NameThisThread  names the calling thread (thread-safe: names only the caller);
//   NamedThread     starts a thread that names itself, then runs `body`.
#pragma once

#include <pthread.h>

#include <string>
#include <thread>
#include <utility>

namespace nodehook {

inline void NameThisThread(std::string name) {
  if (name.size() > 15) name.resize(15);
  pthread_setname_np(pthread_self(), name.c_str());
}

template <typename Body>
std::thread NamedThread(std::string name, Body&& body) {
  return std::thread([name = std::move(name), body = std::forward<Body>(body)]() mutable {
    NameThisThread(std::move(name));
    body();
  });
}

}  // namespace nodehook
