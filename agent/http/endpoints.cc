#include "agent/http/endpoints.h"

#include <utility>

namespace nodehook {
namespace {

LocalResponse FromReport(const HealthReport& report) {
  LocalResponse resp;
  resp.status = report.http_status();
  resp.body = report.body;
  return resp;
}

}  // namespace

void RegisterStandardEndpoints(LocalServer& server, const HealthSnapshot& snapshot, Clock& clock, HealthBounds bounds,
                               Metrics& metrics, const ReadinessProblems& problems) {
  server.Handle("/healthz", [snapshot, &clock, bounds](const LocalRequest&) {
    return FromReport(CheckLiveness(snapshot(), clock.Now(), bounds));
  });
  server.Handle("/readyz", [snapshot, problems](const LocalRequest&) {
    return FromReport(CheckReadiness(snapshot(), problems ? problems() : std::vector<std::string>()));
  });
  server.Handle("/metrics", [&metrics](const LocalRequest&) {
    LocalResponse resp;
    resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
    resp.body = metrics.Render();
    return resp;
  });
}

}  // namespace nodehook
