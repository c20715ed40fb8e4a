// spawn_ceiling: how many hook runs per second one core can start and wait for, the most any
// agent could run that hook: posix_spawn (stdin from /dev/null, stdout and stderr as ours), then
// waitpid, in a loop, pinned to one CPU. test/bench/compare.py sets an agent's backlog drain
// against it.
//
//   spawn_ceiling [--runs N] [--cpu C] HOOK [ARG...]
//
// Prints one line: "runs=<N> seconds=<wall> per_second=<N / wall> spawner_cpu_ms_per_run=<ms>".
// The last is this process's own CPU (RUSAGE_SELF, the hooks left out) per run: what starting and
// waiting for a hook costs the parent at the least, the floor under an agent's CPU per change.
// The hook's environment is ours. Exit 1 when a run does not exit 0 or cannot be started.
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  int runs = 1000;
  int cpu = 0;
  int first = 1;
  for (; first + 1 < argc; first += 2) {
    if (std::strcmp(argv[first], "--runs") == 0) {
      runs = std::atoi(argv[first + 1]);
    } else if (std::strcmp(argv[first], "--cpu") == 0) {
      cpu = std::atoi(argv[first + 1]);
    } else {
      break;
    }
  }
  if (first >= argc || runs <= 0) {
    std::fprintf(stderr, "usage: spawn_ceiling [--runs N] [--cpu C] HOOK [ARG...]\n");
    return 2;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {  // the children inherit it
    std::perror("spawn_ceiling: sched_setaffinity");
    return 2;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> hook_argv(argv + first, argv + argc);
  hook_argv.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) {
    pid_t pid = -1;
    if (int err = posix_spawn(&pid, hook_argv[0], &actions, nullptr, hook_argv.data(), environ); err != 0) {
      std::fprintf(stderr, "spawn_ceiling: cannot start %s: %s\n", hook_argv[0], std::strerror(err));
      return 1;
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "spawn_ceiling: run %d of %s did not exit 0\n", i, hook_argv[0]);
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage self {};
  getrusage(RUSAGE_SELF, &self);
  const auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  const double cpu_ms = ms(self.ru_utime) + ms(self.ru_stime);
  std::printf("runs=%d seconds=%.3f per_second=%.1f spawner_cpu_ms_per_run=%.4f\n", runs, seconds, runs / seconds,
              cpu_ms / runs);
  return 0;
}
