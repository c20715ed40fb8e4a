#include "agent/base/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "agent/base/log.h"
#include "agent/base/mutex.h"

namespace nodehook {
namespace {

constexpr const char* kPrefix = "nodehook_";

bool IsNameChar(char c, bool first) {
  bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return alpha || (!first && c >= '0' && c <= '9');
}

std::string SanitizeIdentifier(const std::string& text) {
  std::string out = text.empty() ? "_" : text;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!IsNameChar(out[i], i == 0)) out[i] = '_';
  }
  return out;
}

// Label values escape backslash, double quote and newline; HELP text only backslash and newline.
std::string Escape(const std::string& text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quotes) out += "\\\"";
    else out += c;
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  // The shortest form that reads back as the same double: le="0.1", not le="0.10000000000000001".
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

void Gauge::Add(double delta) {
  double current = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(current, current + delta, std::memory_order_relaxed)) {
  }
}

std::string PrometheusName(const std::string& name) {
  std::string clean = SanitizeIdentifier(name);
  // process_* are the standard names dashboards expect from every Prometheus client.
  if (clean.rfind(kPrefix, 0) == 0 || clean.rfind("process_", 0) == 0) return clean;
  return kPrefix + clean;
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size()]) {
  for (size_t i = 0; i < bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double v) {
  auto slot = std::lower_bound(bounds_.begin(), bounds_.end(), v);
  if (slot != bounds_.end()) buckets_[static_cast<size_t>(slot - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.Add(v);
}

std::vector<double> LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

std::string PrometheusLabels(const MetricLabels& labels) {
  if (labels.empty()) return "";
  MetricLabels sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  std::string out = "{";
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out += ',';
    out += SanitizeIdentifier(sorted[i].first) + "=\"" + Escape(sorted[i].second, true) + "\"";
  }
  return out + "}";
}

Metrics::Family* Metrics::FamilyFor(const std::string& name, const std::string& help, Kind kind) {
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.kind = kind;
    it->second.help = help;
  }
  if (it->second.kind != kind) {
    Log(LogLevel::kError, "metric registered with two types",
        {{"metric", name}, {"next", "the second registration is not exported"}});
    return nullptr;
  }
  return &it->second;
}

Counter& Metrics::GetCounter(const std::string& name, const std::string& help, const MetricLabels& labels) {
  MutexLock lock(&mu_);
  Family* family = FamilyFor(PrometheusName(name), help, Kind::kCounter);
  if (!family) return *detached_counters_.emplace_back(std::make_unique<Counter>());
  auto& slot = family->counters[PrometheusLabels(labels)];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Metrics::GetGauge(const std::string& name, const std::string& help, const MetricLabels& labels) {
  MutexLock lock(&mu_);
  Family* family = FamilyFor(PrometheusName(name), help, Kind::kGauge);
  if (!family) return *detached_gauges_.emplace_back(std::make_unique<Gauge>());
  auto& slot = family->gauges[PrometheusLabels(labels)];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Gauge& Metrics::GetDerivedCounter(const std::string& name, const std::string& help, const MetricLabels& labels) {
  MutexLock lock(&mu_);
  Family* family = FamilyFor(PrometheusName(name), help, Kind::kCounter);
  if (!family) return *detached_gauges_.emplace_back(std::make_unique<Gauge>());
  auto& slot = family->gauges[PrometheusLabels(labels)];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Metrics::GetHistogram(const std::string& name, const std::string& help, const MetricLabels& labels,
                                  const std::vector<double>& bounds) {
  MutexLock lock(&mu_);
  Family* family = FamilyFor(PrometheusName(name), help, Kind::kHistogram);
  if (!family) return *detached_histograms_.emplace_back(std::make_unique<Histogram>(bounds));
  if (family->bounds.empty()) {
    family->bounds = bounds;
    std::sort(family->bounds.begin(), family->bounds.end());
  }
  auto& slot = family->histograms[PrometheusLabels(labels)];
  if (!slot) slot = std::make_unique<Histogram>(family->bounds);
  return *slot;
}

void Metrics::RenderHistogram(const std::string& name, const std::string& labels, const Histogram& h,
                              std::string* out) {
  // `le` joins the other labels: strip the closing brace and append.
  std::string prefix = labels.empty() ? "{" : labels.substr(0, labels.size() - 1) + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds().size(); ++i) {
    cumulative += h.bucket(i);
    *out += name + "_bucket" + prefix + "le=\"" + FormatValue(h.bounds()[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  uint64_t count = h.count();
  *out += name + "_bucket" + prefix + "le=\"+Inf\"} " + std::to_string(count) + "\n";
  *out += name + "_sum" + labels + " " + FormatValue(h.sum()) + "\n";
  *out += name + "_count" + labels + " " + std::to_string(count) + "\n";
}

Metrics::CollectorId Metrics::AddCollector(std::function<void(Metrics&)> collector) {
  MutexLock lock(&collectors_mu_);
  CollectorId id = next_collector_++;
  collectors_.emplace(id, std::move(collector));
  return id;
}

void Metrics::RemoveCollector(CollectorId id) {
  MutexLock lock(&collectors_mu_);
  collectors_.erase(id);
}

std::string Metrics::Render() {
  {
    // Collectors record through GetGauge(), which takes mu_: run them before taking it.
    MutexLock lock(&collectors_mu_);
    for (const auto& [id, collect] : collectors_) collect(*this);
  }
  MutexLock lock(&mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    static const char* const kTypeNames[] = {" counter\n", " gauge\n", " histogram\n"};
    out += "# HELP " + name + " " + Escape(family.help, false) + "\n";
    out += "# TYPE " + name + kTypeNames[static_cast<int>(family.kind)];
    for (const auto& [labels, c] : family.counters) out += name + labels + " " + std::to_string(c->value()) + "\n";
    for (const auto& [labels, g] : family.gauges) out += name + labels + " " + FormatValue(g->value()) + "\n";
    for (const auto& [labels, h] : family.histograms) RenderHistogram(name, labels, *h, &out);
  }
  return out;
}

Metrics& DefaultMetrics() {
  static Metrics* metrics = new Metrics();  // never destroyed: threads may record during exit
  return *metrics;
}

}  // namespace nodehook
