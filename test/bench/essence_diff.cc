// essence_diff: the CPU cost of deciding what changed in a wide object (issue 8, item 3).
// Builds an object with N keys under spec, changes one of them, and times what the reconciler
// does for that change: both essences and their diff.
//
//   essence_diff [--keys N] [--runs R]
//
// Prints one Markdown table row: keys, then best and median over R runs of wall-clock and of
// process CPU milliseconds (CPU time is what a loaded machine does not distort).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/object/essence.h"

namespace {

std::string WideObject(int keys, int changed_value) {
  std::string json = R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","uid":"u"},"spec":{)";
  for (int i = 0; i < keys; ++i) {
    if (i > 0) json += ',';
    int value = i == keys / 2 ? changed_value : i;
    json += "\"key-" + std::to_string(i) + "\":" + std::to_string(value);
  }
  return json + "}}";
}

}  // namespace

int main(int argc, char** argv) {
  int keys = 100'000, runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--keys") == 0) keys = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
  }
  std::string before = WideObject(keys, -1), after = WideObject(keys, -2);
  std::vector<double> ms, cpu_ms;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpu_start = std::clock();
    auto old_essence = nodehook::ComputeEssence(before, {});
    auto new_essence = nodehook::ComputeEssence(after, {});
    if (!old_essence.ok() || !new_essence.ok()) return 1;
    auto diff = nodehook::DiffEssences(*old_essence, *new_essence);
    if (!diff.ok() || diff->find("\"old\":-1") == std::string::npos) {
      std::fprintf(stderr, "unexpected diff\n");
      return 1;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    cpu_ms.push_back(1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu_ms.begin(), cpu_ms.end());
  std::printf("| %d | %.1f | %.1f | %.1f | %.1f |\n", keys, ms.front(), ms[ms.size() / 2], cpu_ms.front(),
              cpu_ms[cpu_ms.size() / 2]);
  return 0;
}
