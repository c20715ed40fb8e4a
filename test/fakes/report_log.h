// ReportLog: an EventRecorder that keeps every report as a line, for tests of what handlers tell
// the recorder. Not thread-safe: for single-threaded tests.
#pragma once

#include <string>
#include <vector>

#include "agent/events/event_recorder.h"

namespace nodehook {

// Every report, as "<kind> <handler> <number>" ("failing create 2", "recovered create 3").
struct ReportLog : EventRecorder {
  std::vector<std::string> reports;
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string& handler,
                        const std::string&) override {
    reports.push_back("permanent " + handler);
  }
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string& handler) override {
    reports.push_back("succeeded " + handler);
  }
  void Failing(const ResourceRef&, const ObjectMeta&, const std::string& handler, int attempt,
               const std::string& message) override {
    reports.push_back("failing " + handler + " " + std::to_string(attempt) + ": " + message);
  }
  void Recovered(const ResourceRef&, const ObjectMeta&, const std::string& handler, int failures) override {
    reports.push_back("recovered " + handler + " " + std::to_string(failures));
  }
};

}  // namespace nodehook
