// object_views_snapshot: what one refresh of the /v1/objects snapshot costs the housekeeping
// thread (and how long it holds the store's lock, which workers' commits wait for), reading
// summaries (no diffbase bodies, as a whole read of the agent does) against reading whole rows
// (as `nodehook state list` does), and what the agent's refresh costs after C objects changed
// (ObjectViewsPublisher: only those are read again).
//
//   object_views_snapshot [--objects N] [--object-bytes B] [--failing F] [--runs R] [--changed C] DIR
//
// Prints one Markdown table row per read kind: best and median wall and CPU time over R runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <unistd.h>
#include <vector>

#include "agent/base/clock.h"
#include "agent/pipeline/object_views_publisher.h"
#include "storage/sqlite_state_store.h"
#include "storage/state_report.h"

namespace {

using namespace nodehook;
using Wall = std::chrono::steady_clock;

double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

int Arg(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

// A JSON object of about `bytes` (the store skips a row whose body is not JSON as corrupt).
std::string Body(int bytes, char fill) {
  return "{\"f\":\"" + std::string(static_cast<size_t>(std::max(bytes - 8, 0)), fill) + "\"}";
}

void PrintRow(int objects, int object_bytes, const std::string& read, std::vector<double> wall, std::vector<double> cpu) {
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf("| %d | %d | %s | %.2f / %.2f ms | %.2f / %.2f ms |\n", objects, object_bytes, read.c_str(), wall[0],
              wall[wall.size() / 2], cpu[0], cpu[cpu.size() / 2]);
}

// The agent's refresh after `changed` objects were handled again and announced, `runs` times.
bool TimePublisher(StateStore& store, int objects, int object_bytes, int changed, int runs) {
  ObjectViewsPublisherOptions options;
  options.min_interval = Duration(0);
  options.max_age = std::chrono::hours(1);
  options.max_busy_share = 1.0;
  ObjectViewsPublisher publisher(store, SystemClock::Instance(), options);
  publisher.RefreshIfDue();  // the first, whole read
  std::vector<double> wall, cpu;
  for (int r = 0; r < runs; ++r) {
    for (int c = 0; c < changed; ++c) {
      const int i = (r * changed + c * 7919) % objects;
      ObjectRecord o{"uid-" + std::to_string(i), "widgets.example.com/v1", "bench", "w" + std::to_string(i),
                     Body(object_bytes / 2, 'e'), Body(object_bytes, 'y'), objects + r};
      if (!store.RecordHandled(o, "create").ok()) return false;
      publisher.MarkChanged(o.uid);
    }
    double cpu_before = CpuMs();
    auto before = Wall::now();
    publisher.RefreshIfDue();
    wall.push_back(std::chrono::duration<double, std::milli>(Wall::now() - before).count());
    cpu.push_back(CpuMs() - cpu_before);
    auto latest = publisher.Latest();
    if (!latest.ok() || (*latest)->objects.size() != static_cast<size_t>(objects)) return false;
  }
  PrintRow(objects, object_bytes, "agent refresh after " + std::to_string(changed) + " changed (/v1/objects)", wall, cpu);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: object_views_snapshot [--objects N] [--object-bytes B] [--failing F] [--runs R] [--changed C] "
                 "DIR\n");
    return 2;
  }
  int objects = Arg(argc, argv, "--objects", 10000);
  int object_bytes = Arg(argc, argv, "--object-bytes", 4096);
  int failing = Arg(argc, argv, "--failing", 100);
  int runs = Arg(argc, argv, "--runs", 5);
  int changed = Arg(argc, argv, "--changed", 100);
  std::string path = std::string(argv[argc - 1]) + "/nodehook-views-bench-" + std::to_string(getpid()) + ".db";
  auto store = SqliteStateStore::Open(path, "bench-node", StoreOptions{});
  if (!store.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), store.status().ToString().c_str());
    return 1;
  }
  for (int i = 0; i < objects; ++i) {
    ObjectRecord o{"uid-" + std::to_string(i), "widgets.example.com/v1", "bench", "w" + std::to_string(i),
                   Body(object_bytes / 2, 'e'), Body(object_bytes, 'x'), i};
    if (!(*store)->RecordHandled(o, "create").ok()) return 1;
    if (i >= failing) continue;
    HandlerRecord h;
    h.uid = o.uid;
    h.handler = "update";
    h.resource = o.resource;
    h.namespace_name = o.namespace_name;
    h.name = o.name;
    h.retries = 3;
    h.last_outcome = "failed";
    h.last_message = "exited 1: something went wrong";
    if (!(*store)->RecordAttempt(h).ok()) return 1;
  }
  std::printf("| objects | object bytes | read | wall best / median | CPU best / median |\n| ---: | ---: | --- | ---: | ---: |\n");
  for (bool bodies : {false, true}) {
    std::vector<double> wall, cpu;
    for (int r = 0; r < runs; ++r) {
      double cpu_before = CpuMs();
      auto before = Wall::now();
      auto views = CollectObjectViews(**store, bodies);
      wall.push_back(std::chrono::duration<double, std::milli>(Wall::now() - before).count());
      cpu.push_back(CpuMs() - cpu_before);
      if (!views.ok() || views->size() != static_cast<size_t>(objects)) {
        std::fprintf(stderr, "read: %s\n", views.ok() ? "wrong count" : views.status().ToString().c_str());
        return 1;
      }
    }
    PrintRow(objects, object_bytes, bodies ? "whole rows (state list)" : "summaries (/v1/objects, a whole read)", wall,
             cpu);
  }
  if (!TimePublisher(**store, objects, object_bytes, changed, runs)) return 1;
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return 0;
}
