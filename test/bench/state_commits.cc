// state_commits: how fast the state store commits, with synchronous=NORMAL and FULL.
// Every RecordHandled is one transaction (the agent does not group commits), so commits/s and
// the commit latency percentiles are what a hook completion costs.
//
//   state_commits [--commits N] [--object-bytes B] DIR...
//
// Prints one Markdown table row per (directory, mode). Each run uses a fresh file in DIR.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "storage/local_fs.h"
#include "storage/sqlite_state_store.h"

namespace {

using nodehook::ObjectRecord;
using nodehook::SqliteStateStore;
using nodehook::StoreOptions;
using Clock = std::chrono::steady_clock;

struct Figures {
  double commits_per_second = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
};

double Percentile(std::vector<double> sorted, double p) {
  size_t index = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1));
  return sorted[index];
}

bool Measure(const std::string& dir, bool full, int commits, size_t object_bytes, Figures* out) {
  std::string path = dir + "/nodehook-bench-" + std::to_string(getpid()) + (full ? "-full.db" : "-normal.db");
  StoreOptions options;
  options.synchronous_full = full;
  auto store = SqliteStateStore::Open(path, "bench-node", options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), store.status().ToString().c_str());
    return false;
  }
  ObjectRecord object;
  object.resource = "widgets.example.com/v1";
  object.namespace_name = "bench";
  object.essence = R"({"spec":{"size":3}})";
  object.last_object = std::string(object_bytes, 'x');
  std::vector<double> latencies_us;
  latencies_us.reserve(static_cast<size_t>(commits));
  auto start = Clock::now();
  for (int i = 0; i < commits; ++i) {
    object.uid = "uid-" + std::to_string(i % 1000);  // a steady population of 1,000 objects
    object.name = "w" + std::to_string(i % 1000);
    object.handled_at_ms = i;
    auto before = Clock::now();
    nodehook::Status status = (*store)->RecordHandled(object, "update");
    auto after = Clock::now();
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return false;
    }
    latencies_us.push_back(std::chrono::duration<double, std::micro>(after - before).count());
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());

  std::sort(latencies_us.begin(), latencies_us.end());
  out->commits_per_second = commits / seconds;
  out->p50_us = Percentile(latencies_us, 0.50);
  out->p99_us = Percentile(latencies_us, 0.99);
  out->max_us = latencies_us.back();
  return true;
}

std::string FsName(const std::string& dir) {
  auto type = nodehook::StatfsType(dir);
  if (!type.ok()) return "?";
  switch (*type) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x794C7630: return "overlay";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    default: {
      char buf[24];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(*type));
      return buf;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int commits = 5000;
  size_t object_bytes = 1024;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--commits" && i + 1 < argc) {
      commits = std::atoi(argv[++i]);
    } else if (arg == "--object-bytes" && i + 1 < argc) {
      object_bytes = static_cast<size_t>(std::atol(argv[++i]));
    } else {
      dirs.push_back(arg);
    }
  }
  if (dirs.empty() || commits < 1) {
    std::fprintf(stderr, "usage: state_commits [--commits N] [--object-bytes B] DIR...\n");
    return 2;
  }
  std::printf("| directory | fs | synchronous | commits/s | p50 ms | p99 ms | max ms |\n");
  std::printf("| --- | --- | --- | ---: | ---: | ---: | ---: |\n");
  for (const std::string& dir : dirs) {
    for (bool full : {false, true}) {
      Figures f;
      if (!Measure(dir, full, commits, object_bytes, &f)) return 1;
      std::printf("| %s | %s | %s | %.0f | %.3f | %.3f | %.3f |\n", dir.c_str(), FsName(dir).c_str(),
                  full ? "FULL" : "NORMAL", f.commits_per_second, f.p50_us / 1000, f.p99_us / 1000,
                  f.max_us / 1000);
      std::fflush(stdout);
    }
  }
  return 0;
}
