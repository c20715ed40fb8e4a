#include "agent/base/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "agent/base/log.h"

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
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", v);
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
  return clean.rfind(kPrefix, 0) == 0 ? clean : kPrefix + clean;
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
  std::lock_guard<std::mutex> lock(mu_);
  Family* family = FamilyFor(PrometheusName(name), help, Kind::kCounter);
  if (!family) return *detached_counters_.emplace_back(std::make_unique<Counter>());
  auto& slot = family->counters[PrometheusLabels(labels)];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Metrics::GetGauge(const std::string& name, const std::string& help, const MetricLabels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Family* family = FamilyFor(PrometheusName(name), help, Kind::kGauge);
  if (!family) return *detached_gauges_.emplace_back(std::make_unique<Gauge>());
  auto& slot = family->gauges[PrometheusLabels(labels)];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

void Metrics::AddCollector(std::function<void(Metrics&)> collector) {
  std::lock_guard<std::mutex> lock(collectors_mu_);
  collectors_.push_back(std::move(collector));
}

std::string Metrics::Render() {
  {
    // Collectors record through GetGauge(), which takes mu_: run them before taking it.
    std::lock_guard<std::mutex> lock(collectors_mu_);
    for (const auto& collect : collectors_) collect(*this);
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    bool counter = family.kind == Kind::kCounter;
    out += "# HELP " + name + " " + Escape(family.help, false) + "\n";
    out += "# TYPE " + name + (counter ? " counter\n" : " gauge\n");
    if (counter) {
      for (const auto& [labels, c] : family.counters) out += name + labels + " " + std::to_string(c->value()) + "\n";
    } else {
      for (const auto& [labels, g] : family.gauges) out += name + labels + " " + FormatValue(g->value()) + "\n";
    }
  }
  return out;
}

Metrics& DefaultMetrics() {
  static Metrics* metrics = new Metrics();  // never destroyed: threads may record during exit
  return *metrics;
}

}  // namespace nodehook
