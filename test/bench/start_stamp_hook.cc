// A hook for latency benchmarks (test/bench/throughput.py --latency): appends one line
//   <CLOCK_REALTIME ns> <NODEHOOK_REASON> <NODEHOOK_NAME>
// to $BENCH_STAMP_FILE as its first act, in one O_APPEND write, then exits 0. Plain syscalls
// only, so the stamp is as close to the hook's start as a program can take it.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main() {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const char* path = getenv("BENCH_STAMP_FILE");
  const char* reason = getenv("NODEHOOK_REASON");
  const char* name = getenv("NODEHOOK_NAME");
  if (!path || !reason || !name) return 2;
  char line[512];
  int n = snprintf(line, sizeof line, "%lld %s %s\n",
                   static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec, reason, name);
  if (n <= 0 || n >= static_cast<int>(sizeof line)) return 2;
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return 2;
  bool whole = write(fd, line, static_cast<size_t>(n)) == n;
  close(fd);
  return whole ? 0 : 2;
}
