// The output kinds' name table: each kind one name of its own, read back as that kind; the names
// the result file and the state file already hold keep their kinds.
#include <catch2/catch.hpp>

#include <iterator>
#include <set>
#include <string>

#include "agent/outputs/output_kind.h"
#include "agent/outputs/published_outputs.h"

namespace nodehook {
namespace {

TEST_CASE("every output kind has one name and one entry name, and the name is that kind", "[output_kind]") {
  std::set<std::string> names, entry_names;
  std::set<OutputKind> listed;
  // Every value up to the last, so a kind left out of kAllOutputKinds is found too.
  for (int i = static_cast<int>(OutputKind::kLabels); i <= static_cast<int>(OutputKind::kTaints); ++i) {
    const auto kind = static_cast<OutputKind>(i);
    const std::string name = OutputKindName(kind), entry = OutputEntryName(kind);
    INFO(i << ": " << name << " / " << entry);
    CHECK_FALSE(name.empty());
    CHECK_FALSE(entry.empty());
    CHECK(names.insert(name).second);
    CHECK(entry_names.insert(entry).second);
    REQUIRE(OutputKindNamed(name).has_value());
    CHECK(*OutputKindNamed(name) == kind);
    CHECK_FALSE(OutputKindNamed(entry).has_value());
  }
  for (OutputKind kind : kAllOutputKinds) CHECK(listed.insert(kind).second);
  CHECK(listed.size() == names.size());
  CHECK(std::size(kAllOutputKinds) == 4);
}

TEST_CASE("the names in result files and the state file keep their kinds, in their order", "[output_kind]") {
  CHECK(OutputKindNamed("labels") == OutputKind::kLabels);
  CHECK(OutputKindNamed("annotations") == OutputKind::kAnnotations);
  CHECK(OutputKindNamed("conditions") == OutputKind::kConditions);
  CHECK(OutputKindNamed("taints") == OutputKind::kTaints);
  CHECK(OutputKindNames() == "labels, annotations, conditions, taints");
  CHECK_FALSE(OutputKindNamed("").has_value());
  CHECK_FALSE(OutputKindNamed("Labels").has_value());
  CHECK_FALSE(OutputKindNamed("label").has_value());
}

TEST_CASE("ForEachKind visits each kind's own field, in the table's order", "[output_kind]") {
  PublishedOutputs outputs;
  outputs.annotations.emplace();
  outputs.taints.emplace();
  std::string given;
  ForEachKind(outputs, [&given](OutputKind kind, const auto& field) {
    given += std::string(OutputKindName(kind)) + (field ? "+ " : "- ");
  });
  CHECK(given == "labels- annotations+ conditions- taints+ ");
}

}  // namespace
}  // namespace nodehook
