#include "agent/kubectl/fleet_survey.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace nodehook {
namespace {

NodeAnswer AskOne(FleetSource& source, const AgentPod& pod, const std::string& path) {
  NodeAnswer answer;
  answer.pod = pod;
  if (pod.ip.empty()) {
    answer.error = UnavailableError("pod has no IP yet (phase " + (pod.phase.empty() ? "unknown" : pod.phase) + ")");
    return answer;
  }
  Result<std::string> body = source.Ask(pod, path);
  if (!body.ok()) {
    answer.error = body.status();
    return answer;
  }
  Result<NodeObjects> parsed = ParseObjectsAnswer(*body);
  if (!parsed.ok()) {
    answer.error = Status(parsed.status().code(), "unexpected answer: " + parsed.status().message());
    return answer;
  }
  answer.objects = std::move(parsed).value();
  return answer;
}

}  // namespace

std::string NodeAnswer::NodeName() const {
  if (error.ok() && !objects.node.empty()) return objects.node;
  return pod.node.empty() ? "pod/" + pod.name : pod.node;
}

Result<std::vector<NodeAnswer>> Survey(FleetSource& source, const std::string& path, int parallel) {
  Result<std::vector<AgentPod>> pods = source.ListAgents();
  if (!pods.ok()) return pods.status();
  std::vector<NodeAnswer> answers(pods->size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < pods->size(); i = next++) answers[i] = AskOne(source, (*pods)[i], path);
  };
  size_t threads = std::min<size_t>(static_cast<size_t>(std::max(parallel, 1)), pods->size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();  // this thread is one of the workers
  for (auto& t : pool) t.join();
  return answers;
}

}  // namespace nodehook
