#include "agent/kubectl/rollout_steer.h"

namespace nodehook {
namespace {

constexpr const char* kWhat = "kubectl nodehook";

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

}  // namespace

int SteerRollout(RolloutCluster& cluster, const RolloutView& view, bool pause, bool stop_nodes, std::ostream& out,
                 std::ostream& err) {
  std::string annotations =
      pause ? Quoted(kRolloutPausedAnnotation) + ":" + Quoted(stop_nodes ? kRolloutStopNodes : "true")
            : Quoted(kRolloutPausedAnnotation) + ":null," + Quoted(kRolloutResumeAnnotation) + ":" + Quoted(view.state.state);
  std::string body = "{\"metadata\":{\"annotations\":{" + annotations + "}}}";
  Status patched = cluster.MergePatchObject(SpecObject(view.spec, view.spec.version), body);
  if (!patched.ok()) {
    err << kWhat << ": patching " << view.Describe() << ": " << patched.message() << "\n";
    return 1;
  }
  out << view.Describe()
      << (!pause      ? " resumed at state " + view.state.state.substr(0, 12)
          : stop_nodes ? " paused; the nodes inside stop before their hook succeeds and give their cordon back"
                       : " paused; the nodes inside finish their work")
      << "\n";
  return 0;
}

}  // namespace nodehook
