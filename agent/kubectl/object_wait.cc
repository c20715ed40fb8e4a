#include "agent/kubectl/object_wait.h"

#include <algorithm>
#include <cctype>

namespace nodehook {
namespace {

constexpr const char* kWhat = "kubectl nodehook";

int Fail(std::ostream& err, const Status& status) {
  err << kWhat << ": " << status.message() << "\n";
  return 1;
}

// One look for `wait`: the verdict, or why there is none this time (the API refused, ...).
using Look = std::function<Result<WaitVerdict>()>;

int PollUntilDone(const Look& look, const WaitOptions& options, const WaitTime& time, std::ostream& out) {
  const TimePoint deadline = time.clock->Now() + options.timeout;
  Result<WaitVerdict> last = Status(StatusCode::kUnavailable, "not looked yet");
  while (true) {
    last = look();
    if (last.ok() && last->kind == WaitVerdict::Kind::kDone) {
      out << last->summary << "\n";
      return 0;
    }
    if (last.ok() && last->kind == WaitVerdict::Kind::kHalted) {
      out << last->summary << "\n" << FormatBlockers(*last);
      return 5;
    }
    TimePoint now = time.clock->Now();
    if (now >= deadline) break;
    time.sleep(std::min<Duration>(options.poll, deadline - now));
  }
  out << "timed out after " << options.timeout_text << ": ";
  if (last.ok()) {
    out << last->summary << "\n" << FormatBlockers(*last);
  } else {
    out << last.status().message() << "\n";
  }
  return 4;
}

// The spec's group and version when its resource has no rollout Leases: spelled, discovered
// from the group, or else from what the agents list under that name.
Result<ObjectSpec> ResolveWithoutLeases(RolloutCluster& cluster, FleetSource& fleet, const ObjectSpec& spec,
                                        int parallel) {
  if (spec.group_given && !spec.version.empty()) return spec;
  if (spec.group_given) {
    Result<std::string> version = cluster.PreferredVersion(spec.group);
    if (!version.ok()) return version.status();
    ObjectSpec out = spec;
    out.version = *version;
    return out;
  }
  std::string path = "/v1/objects?name=" + spec.name + (spec.namespace_name.empty() ? "" : "&namespace=" + spec.namespace_name);
  Result<std::vector<NodeAnswer>> answers = Survey(fleet, path, parallel);
  if (!answers.ok()) return answers.status();
  for (const NodeAnswer& a : *answers) {
    for (const ObjectView& o : a.objects.objects) {
      if (MatchesResource(spec, o.resource, nullptr)) return ResolvedSpec(spec, o.resource);
    }
  }
  return NotFoundError("no agent lists " + spec.Describe() + ", so its group is unknown: spell RESOURCE.GROUP");
}

// One survey round: every agent's answer about `uid`, judged against `live_rv` (nullopt: gone).
Result<WaitVerdict> SurveyLook(FleetSource& fleet, const std::string& uid, const std::optional<std::string>& live_rv,
                               int parallel, const std::string& agents_namespace) {
  Result<std::vector<NodeAnswer>> answers = Survey(fleet, "/v1/objects?uid=" + uid, parallel);
  if (!answers.ok()) return answers.status();
  if (answers->empty()) return UnavailableError("no agent pods in namespace " + agents_namespace);
  return JudgeSurveyWait(*answers, uid, live_rv);
}

}  // namespace

Result<Duration> ParseWaitDuration(const std::string& text) {
  if (text.empty()) return InvalidError("expected a duration like 90s or 5m, got \"\"");
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    int64_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && n < 100000000) {
      n = n * 10 + (text[i++] - '0');
    }
    if (i == start) return InvalidError("expected a duration like 90s or 5m, got \"" + text + "\"");
    char unit = i < text.size() ? text[i++] : 's';
    if (unit == 'h') {
      total += n * 3600;
    } else if (unit == 'm') {
      total += n * 60;
    } else if (unit == 's') {
      total += n;
    } else {
      return InvalidError("expected a duration like 90s or 5m (units h, m, s), got \"" + text + "\"");
    }
  }
  return Duration(total * 1000);
}

int WaitForObject(RolloutCluster& cluster, const AgentsFleet& make_fleet, const ObjectSpec& spec,
                  const WaitOptions& options, const WaitTime& time, std::ostream& out, std::ostream& err) {
  Result<std::vector<RolloutLease>> leases = cluster.ListRolloutLeases();
  if (!leases.ok()) return Fail(err, leases.status());
  std::string resource_id;
  Result<std::vector<RolloutLease>> mine = ResourceLeases(*leases, spec, &resource_id);
  if (!mine.ok() && mine.status().code() != StatusCode::kNotFound) return Fail(err, mine.status());
  Result<std::unique_ptr<FleetSource>> fleet =
      make_fleet ? make_fleet() : Result<std::unique_ptr<FleetSource>>(UnavailableError("no agents to ask"));
  const int parallel = options.parallel;
  const std::string& agents_ns = options.agents_namespace;

  if (mine.ok()) {
    Result<RolloutView> first = ReadRollout(cluster, spec, time.server_now_ms, time.windows);
    if (!first.ok()) return Fail(err, first.status());
    const std::string uid = first->object.meta.uid;
    Look look = [&]() -> Result<WaitVerdict> {
      Result<RolloutView> view = ReadRollout(cluster, spec, time.server_now_ms, time.windows);
      if (!view.ok() && view.status().code() == StatusCode::kNotFound) {
        WaitVerdict gone;
        gone.kind = WaitVerdict::Kind::kDone;
        gone.summary = spec.Describe() + " was deleted: " + view.status().message();
        return gone;
      }
      if (!view.ok()) return view.status();
      WaitVerdict leased = JudgeRolloutWait(*view);
      if (leased.kind != WaitVerdict::Kind::kPending || !fleet.ok() || view->object.meta.uid != uid) return leased;
      // Node Leases get results for the policy's gated reasons only (a create with `reasons:
      // [update]`, or a reason without a hook, writes none): the agents' own word settles those.
      Result<WaitVerdict> asked = SurveyLook(**fleet, uid, view->object.meta.resource_version, parallel, agents_ns);
      return asked.ok() && asked->kind == WaitVerdict::Kind::kDone ? *asked : leased;
    };
    return PollUntilDone(look, options, time, out);
  }

  // No rollout policy: ask the agents.
  if (!fleet.ok()) {
    err << kWhat << ": " << fleet.status().message() << "\n";
    return 2;
  }
  Result<ObjectSpec> resolved = ResolveWithoutLeases(cluster, **fleet, spec, parallel);
  if (!resolved.ok()) return Fail(err, resolved.status());
  const ObjectRef ref = SpecObject(*resolved, resolved->version);
  Result<KubeObject> object = cluster.GetObject(ref);
  if (!object.ok()) {
    return Fail(err, object.status().code() == StatusCode::kNotFound ? NotFoundError(spec.Describe() + " not found")
                                                                     : object.status());
  }
  const std::string uid = object->meta.uid;
  Look look = [&]() -> Result<WaitVerdict> {
    Result<KubeObject> live = cluster.GetObject(ref);
    if (!live.ok() && live.status().code() != StatusCode::kNotFound) return live.status();
    std::optional<std::string> rv;
    if (live.ok() && live->meta.uid == uid) rv = live->meta.resource_version;  // a new object of that name: not ours
    return SurveyLook(**fleet, uid, rv, parallel, agents_ns);
  };
  return PollUntilDone(look, options, time, out);
}

}  // namespace nodehook
