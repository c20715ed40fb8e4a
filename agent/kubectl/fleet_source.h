// FleetSource: how `kubectl nodehook` finds the agents and asks each one for its view.
// KubeFleetSource lists the agent pods through the API server and reaches each agent's probe
// port through the API server's pod proxy (/api/v1/namespaces/NS/pods/NAME:PORT/proxy/...),
// so the user needs only `pods list` and `pods/proxy get` in the agents' namespace, and no
// network path to the nodes. Implementations are thread-safe (agents are asked in parallel).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/transport/http_transport.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

struct AgentPod {
  std::string name;
  std::string node;   // spec.nodeName; "" while unscheduled
  std::string ip;     // status.podIP; "" until the pod has one
  std::string phase;  // status.phase
};

class FleetSource {
 public:
  virtual ~FleetSource() = default;
  // Every pod that matches, ordered by node then name.
  virtual Result<std::vector<AgentPod>> ListAgents() = 0;
  // The body of a 200 answer to GET `path` (e.g. "/v1/objects?limit=500") on the pod's probe
  // port; otherwise an error saying who answered what ("HTTP 503: ..."), or why nobody did.
  virtual Result<std::string> Ask(const AgentPod& pod, const std::string& path) = 0;
};

// Defaults match deploy/base.
struct FleetTarget {
  std::string namespace_name = "nodehook";
  std::string label_selector = "app.kubernetes.io/name=nodehook";
  int port = 8090;
};

// `client` lists the pods; `proxy` carries the proxied GETs (both to the same API server).
std::unique_ptr<FleetSource> NewKubeFleetSource(std::unique_ptr<KubeClient> client,
                                                std::unique_ptr<HttpTransport> proxy, FleetTarget target);

// "/api/v1/namespaces/NS/pods/NAME:PORT/proxy" followed by `path`.
std::string PodProxyPath(const std::string& namespace_name, const std::string& pod, int port, const std::string& path);

// The fields above from a Pod's JSON; kInvalid for something that is not a Pod.
Result<AgentPod> ParseAgentPod(const std::string& json);

}  // namespace nodehook
