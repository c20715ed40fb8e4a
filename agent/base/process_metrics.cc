// The standard process_* metrics, read from /proc/self at every scrape, as the Prometheus
// client libraries export them, plus nodehook_build_info.
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/base/metrics.h"

namespace nodehook {
namespace {

int CountOpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n - 1;  // the directory stream's own descriptor
}

struct ProcStat {
  double cpu_seconds = 0;
  double start_seconds_since_boot = 0;
  double virtual_bytes = 0;
  double resident_bytes = 0;
  bool ok = false;
};

// /proc/self/stat: the command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
ProcStat ReadProcStat() {
  ProcStat out;
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return out;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return out;
  std::istringstream fields(line.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0, start = 0, vsize = 0, rss_pages = 0;
  // Field 3 is the first after ')'; utime=14, stime=15, starttime=22, vsize=23, rss=24.
  for (int i = 3; i <= 24 && fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    else if (i == 15) stime = std::stod(f);
    else if (i == 22) start = std::stod(f);
    else if (i == 23) vsize = std::stod(f);
    else if (i == 24) rss_pages = std::stod(f);
  }
  double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  out.cpu_seconds = (utime + stime) / ticks;
  out.start_seconds_since_boot = start / ticks;
  out.virtual_bytes = vsize;
  out.resident_bytes = rss_pages * static_cast<double>(::sysconf(_SC_PAGESIZE));
  out.ok = true;
  return out;
}

double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

void RegisterProcessMetrics(Metrics& metrics, const std::string& version) {
  metrics.GetGauge("build_info", "Always 1; the version label says which nodehook runs", {{"version", version}}).Set(1);
  const double boot = BootTimeSeconds();
  metrics.AddCollector([boot](Metrics& m) {
    ProcStat stat = ReadProcStat();
    if (stat.ok) {
      m.GetDerivedCounter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.").Set(stat.cpu_seconds);
      m.GetGauge("process_resident_memory_bytes", "Resident memory size in bytes.").Set(stat.resident_bytes);
      m.GetGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.").Set(stat.virtual_bytes);
      m.GetGauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.")
          .Set(boot + stat.start_seconds_since_boot);
    }
    m.GetGauge("process_open_fds", "Number of open file descriptors.").Set(CountOpenFds());
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
      m.GetGauge("process_max_fds", "Maximum number of open file descriptors.")
          .Set(limit.rlim_cur == RLIM_INFINITY ? -1.0 : static_cast<double>(limit.rlim_cur));
    }
  });
}

}  // namespace nodehook
