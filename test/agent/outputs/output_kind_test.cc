// The output kinds' name table: each kind one name of its own, read back as that kind; the names
// the result file and the state file already hold keep their kinds.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "agent/outputs/output_kind.h"
#include "agent/outputs/published_outputs.h"

namespace nodehook {
namespace {

TEST_CASE("every output kind has one name and one entry name, and the name is that kind", "[output_kind]") {
  std::set<std::string> names, entry_names;
  std::set<OutputKind> kinds;
  std::string listed;
  for (OutputKind kind : kAllOutputKinds) {
    const std::string name = OutputKindName(kind), entry = OutputEntryName(kind);
    INFO(static_cast<int>(kind) << ": " << name << " / " << entry);
    CHECK(kinds.insert(kind).second);
    CHECK_FALSE(name.empty());
    CHECK_FALSE(entry.empty());
    CHECK(names.insert(name).second);
    CHECK(entry_names.insert(entry).second);
    REQUIRE(OutputKindNamed(name).has_value());
    CHECK(*OutputKindNamed(name) == kind);
    CHECK_FALSE(OutputKindNamed(entry).has_value());
    listed += (listed.empty() ? "" : ", ") + name;
  }
  // The enum's values are 0..N-1 (none skipped), each listed once.
  CHECK(kinds.size() == static_cast<size_t>(static_cast<int>(*kinds.rbegin()) + 1));
  CHECK(OutputKindNames() == listed);
}

TEST_CASE("the names in result files and the state file keep their kinds", "[output_kind]") {
  // Written by earlier versions: an upgrade must read them as the same kinds.
  CHECK(OutputKindNamed("labels") == OutputKind::kLabels);
  CHECK(OutputKindNamed("annotations") == OutputKind::kAnnotations);
  CHECK(OutputKindNamed("conditions") == OutputKind::kConditions);
  CHECK(OutputKindNamed("taints") == OutputKind::kTaints);
  CHECK_FALSE(OutputKindNamed("").has_value());
  CHECK_FALSE(OutputKindNamed("Labels").has_value());
  CHECK_FALSE(OutputKindNamed("label").has_value());
}

TEST_CASE("ForEachKind visits each kind's own field once, in the table's order", "[output_kind]") {
  PublishedOutputs outputs;
  outputs.annotations.emplace();
  outputs.taints.emplace();
  std::vector<OutputKind> visited;
  std::set<OutputKind> given;
  ForEachKind(outputs, [&](OutputKind kind, const auto& field) {
    visited.push_back(kind);
    if (field) given.insert(kind);
  });
  CHECK(visited == std::vector<OutputKind>(std::begin(kAllOutputKinds), std::end(kAllOutputKinds)));
  CHECK(given == std::set<OutputKind>{OutputKind::kAnnotations, OutputKind::kTaints});
}

}  // namespace
}  // namespace nodehook
