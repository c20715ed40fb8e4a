// window_judge: the CPU cost of JudgeWindows (agent/rollout/rules/window.h), which the rollout gate
// calls for each gated decision. Times typical windows, a year-long search for a start that
// does not come, and a set that is always open (the close is followed for 8 days).
//
//   window_judge [--runs R]
//
// Prints Markdown table rows: case, judgements, and microseconds per judgement (best of R runs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/rollout/rules/window.h"

namespace {

struct Case {
  const char* name;
  std::vector<nodehook::RolloutWindow> windows;
  int64_t from;  // the first judgement; each next one is 61 s later
  int judgements;
};

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
  }
  using std::chrono::seconds;
  const int64_t dec1 = 1796162400;  // 2026-12-01 22:00 UTC
  const std::vector<Case> cases = {
      {"weeknights 22:00 Berlin, 4 h, over a day", {{"0 22 * * 1-5", seconds(14400), "Europe/Berlin"}}, dec1, 1440},
      {"three windows in three zones, over a day",
       {{"0 22 * * 1-5", seconds(14400), "Europe/Berlin"},
        {"30 1 * * SAT,SUN", seconds(7200), "America/New_York"},
        {"0 3 1 * *", seconds(3600), "Asia/Kolkata"}},
       dec1,
       1440},
      {"29 February only: a year searched, no start", {{"0 0 29 2 *", seconds(3600), "UTC"}}, dec1, 200},
      {"every minute for 60 s: always open, 8 days followed", {{"* * * * *", seconds(60), "Europe/Berlin"}}, dec1, 5},
  };
  for (const Case& c : cases) {
    auto compiled = nodehook::CompileWindows(c.windows);
    if (!compiled.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name, compiled.status().message().c_str());
      return 1;
    }
    double best = 1e300;
    volatile int64_t sink = 0;  // keeps the judgements from being optimised away
    for (int r = 0; r < runs; ++r) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < c.judgements; ++i) {
        nodehook::WindowState s = nodehook::JudgeWindows(*compiled, c.from + 61 * i);
        sink += s.closes_at + s.next_open_at;
      }
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      best = std::min(best, us / c.judgements);
    }
    std::printf("| %s | %d | %.2f |\n", c.name, c.judgements, best);
  }
  return 0;
}
