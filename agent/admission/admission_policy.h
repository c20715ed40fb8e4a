// AdmissionPolicy: one ValidatingAdmissionPolicy and its binding as the node-bound rules
// (node_bound_policy.h) write them: matched to the agents' ServiceAccount only, failurePolicy Fail,
// every version of its resources, the token's node name as `variables.node` (a write by a token
// without one is refused first, saying why), and each validation's reason Forbidden. Rendered as
// YAML for kubectl apply.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nodehook {

// Whose writes the rules confine, and what they are called.
struct PolicySubject {
  std::string name = "nodehook";             // prefix of the policies' and bindings' names
  std::string namespace_name = "nodehook";   // the agents' namespace (their ServiceAccount's)
  std::string service_account = "nodehook";  // the agents' ServiceAccount
};

struct Validation {
  std::string expression;
  std::string message;             // fixed text, or
  std::string message_expression;  // CEL building it
};

struct Policy {
  std::string name;
  std::string comment;
  std::vector<std::string> resource_rules;  // flow-style YAML maps (ResourceRule)
  std::string namespace_name;                // "" = every namespace
  std::vector<std::pair<std::string, std::string>> variables;
  std::vector<Validation> validations;
  std::string param_kind;  // "" = none; else "apiVersion kind"
  std::string param_namespace, param_name;
};

// The policy and its binding, as two YAML documents ("---" between them).
std::string Render(const Policy& p, const PolicySubject& subject);

// A resourceRules entry: every version of group/plural and its subresources, for `operations`
// (a flow list's contents, e.g. "UPDATE").
std::string ResourceRule(const std::string& group, const std::string& plural, const std::string& operations);

// CEL: whether a holder identity names the token's node: the node's name, or the name, "_" and
// the pod's uid (election/election_setup.h). CEL has no functions of our own, so it is spelled out.
std::string CelNamesNode(const std::string& holder);

// One YAML double-quoted scalar: CEL here uses single quotes only, and names never hold quotes.
std::string Quoted(const std::string& s);

}  // namespace nodehook
