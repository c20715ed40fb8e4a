// Kubernetes name syntax: label keys (a rollout's hold label) and the name part of a finalizer.
#include <catch2/catch.hpp>

#include <string>

#include "agent/base/kube_names.h"

namespace nodehook {

TEST_CASE("a qualified name part is 1 to 63 characters, alphanumeric at both ends") {
  CHECK(IsQualifiedNamePart("node-1"));
  CHECK(IsQualifiedNamePart("Node_1.a"));
  CHECK(IsQualifiedNamePart(std::string(63, 'a')));
  CHECK_FALSE(IsQualifiedNamePart(std::string(64, 'a')));
  CHECK_FALSE(IsQualifiedNamePart(""));
  CHECK_FALSE(IsQualifiedNamePart("-node"));
  CHECK_FALSE(IsQualifiedNamePart("node."));
  CHECK_FALSE(IsQualifiedNamePart("no/de"));
}

TEST_CASE("a label key is a name part, or a DNS subdomain, a slash and a name part") {
  CHECK(IsLabelKey("nodehook.io/rollout-hold"));
  CHECK(IsLabelKey("hold"));
  CHECK_FALSE(IsLabelKey("Nodehook.io/hold"));   // a prefix is lower case
  CHECK_FALSE(IsLabelKey("nodehook..io/hold"));
  CHECK_FALSE(IsLabelKey("nodehook.io/"));
  CHECK_FALSE(IsLabelKey("/hold"));
  CHECK(IsDnsSubdomain("a.b-c"));
  CHECK_FALSE(IsDnsSubdomain(std::string(254, 'a')));
}

}  // namespace nodehook
