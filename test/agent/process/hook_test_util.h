// Helpers for tests that run real hook processes: shell-script hooks (tests only; the runner
// itself never uses a shell), a scratch directory (TempDir, from test/fakes), and checks on pids the hooks wrote down.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <thread>

#include "agent/process/action_runner.h"
#include "test/fakes/temp_dir.h"

namespace nodehook::testing {

// /bin/sh -c SCRIPT sh ARGS...: inside the script, $1.. are ARGS.
inline ActionRequest ShellHook(const std::string& script, std::initializer_list<std::string> args = {}) {
  ActionRequest request;
  request.argv = {"/bin/sh", "-c", script, "sh"};
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  request.timeout = std::chrono::seconds(20);
  return request;
}

// The pid a hook wrote to `path`, or -1 if the file is missing or incomplete.
inline pid_t ReadPid(const std::string& path) {
  std::ifstream in(path);
  long pid = -1;
  if (!(in >> pid)) return -1;
  return static_cast<pid_t>(pid);
}

// Polls for a file a hook writes once it is running: an outside event, so polling is the only way.
inline pid_t WaitForPidFile(const std::string& path) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  pid_t pid;
  while ((pid = ReadPid(path)) <= 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pid;
}

// Dead: no such process, or a zombie waiting for init to reap it.
inline bool ProcessIsGone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return true;
  const char state = text[paren + 2];
  return state == 'Z' || state == 'X';
}

// A killed grandchild is reparented and reaped by someone else, a moment later.
inline bool ProcessGoneSoon(pid_t pid) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ProcessIsGone(pid)) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace nodehook::testing
