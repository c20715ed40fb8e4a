#include "agent/admission/admission_policy.h"

#include <sstream>

namespace nodehook {
namespace {

// `node`: the token's node name ("" without one).
const char* const kNodeVariable =
    "'authentication.kubernetes.io/node-name' in request.userInfo.extra && "
    "size(request.userInfo.extra['authentication.kubernetes.io/node-name']) > 0 ? "
    "request.userInfo.extra['authentication.kubernetes.io/node-name'][0] : ''";

const char* const kNoNodeMessage =
    "nodehook agents must write with a pod-bound ServiceAccount token that names their node "
    "(Kubernetes 1.32+, or the ServiceAccountTokenPodNodeInfo feature gate): this token names none, "
    "so it may be a legacy Secret token, a TokenRequest without a pod, or a token from before the gate";

}  // namespace

std::string CelNamesNode(const std::string& holder) {
  return "(" + holder + " == variables.node || " + holder + ".startsWith(variables.node + '_'))";
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}


std::string Render(const Policy& p, const PolicySubject& subject) {
  std::ostringstream y;
  y << "# " << p.comment << "\n"
    << "apiVersion: admissionregistration.k8s.io/v1\n"
    << "kind: ValidatingAdmissionPolicy\n"
    << "metadata:\n"
    << "  name: " << p.name << "\n"
    << "spec:\n"
    << "  failurePolicy: Fail\n";
  if (!p.param_kind.empty()) {
    y << "  paramKind:\n"
      << "    apiVersion: " << p.param_kind.substr(0, p.param_kind.find(' ')) << "\n"
      << "    kind: " << p.param_kind.substr(p.param_kind.find(' ') + 1) << "\n";
  }
  y << "  matchConstraints:\n"
    << "    # Every version: a rule naming some versions guards nothing on the others.\n"
    << "    matchPolicy: Equivalent\n";
  if (!p.namespace_name.empty()) {
    y << "    namespaceSelector:\n"
      << "      matchLabels: {kubernetes.io/metadata.name: " << p.namespace_name << "}\n";
  }
  y << "    resourceRules:\n";
  for (const auto& rule : p.resource_rules) y << "      - " << rule << "\n";
  y << "  # Only the agents: the steward and people keep their own rights.\n"
    << "  matchConditions:\n"
    << "    - name: nodehook-agents\n"
    << "      expression: " << Quoted("request.userInfo.username == 'system:serviceaccount:" + subject.namespace_name +
                                    ":" + subject.service_account + "'")
    << "\n"
    << "  variables:\n"
    << "    - name: node\n"
    << "      expression: " << Quoted(kNodeVariable) << "\n";
  for (const auto& [name, expression] : p.variables) {
    y << "    - name: " << name << "\n"
      << "      expression: " << Quoted(expression) << "\n";
  }
  y << "  validations:\n"
    << "    - expression: \"variables.node != ''\"\n"
    << "      reason: Forbidden\n"
    << "      message: " << Quoted(kNoNodeMessage) << "\n";
  for (const Validation& v : p.validations) {
    y << "    - expression: " << Quoted(v.expression) << "\n"
      << "      reason: Forbidden\n";
    if (!v.message_expression.empty()) {
      y << "      messageExpression: " << Quoted(v.message_expression) << "\n";
    } else {
      y << "      message: " << Quoted(v.message) << "\n";
    }
  }
  y << "---\n"
    << "apiVersion: admissionregistration.k8s.io/v1\n"
    << "kind: ValidatingAdmissionPolicyBinding\n"
    << "metadata:\n"
    << "  name: " << p.name << "\n"
    << "spec:\n"
    << "  policyName: " << p.name << "\n"
    << "  validationActions: [Deny]\n";
  if (!p.param_kind.empty()) {
    y << "  paramRef:\n"
      << "    name: " << p.param_name << "\n"
      << "    namespace: " << p.param_namespace << "\n"
      << "    # Deny would refuse every write to these resources, by anyone, whenever the Lease is missing (the\n"
      << "    # API server resolves the parameter before it matches the agents): no Lease, no check. The first\n"
      << "    # agent creates it at start, and no agent may delete it (the leases policy).\n"
      << "    parameterNotFoundAction: Allow\n";
  }
  return y.str();
}

std::string ResourceRule(const std::string& group, const std::string& plural, const std::string& operations) {
  return "{apiGroups: [" + Quoted(group) + "], apiVersions: [\"*\"], resources: [" + Quoted(plural) + ", " +
         Quoted(plural + "/*") + "], operations: [" + operations + "]}";
}

}  // namespace nodehook
