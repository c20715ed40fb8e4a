// DeriveNodeCondition: a resource's objects on this node as one NodeCondition.
#include "agent/outputs/node_condition.h"

#include <catch2/catch.hpp>

namespace nodehook {
namespace {

const ResourceScope kWidgets(ResourceRef{"example.com", "v1", "widgets", "", ""});

SharedSnapshotObject Object(const std::string& name, std::vector<HandlerRecord> handlers = {},
                            const char* resource = "widgets.example.com/v1", const char* namespace_name = "ns") {
  auto v = std::make_shared<SnapshotObject>();
  v->uid = CompactUid("uid-" + name);
  v->resource = resource;
  v->key = SnapshotObject::KeyOf(namespace_name, name);
  v->handlers = SnapshotHandlers(std::move(handlers));
  return v;
}

HandlerRecord Handler(const std::string& handler, const std::string& outcome, int retries,
                      const std::string& message = "") {
  HandlerRecord h;
  h.handler = handler;
  h.last_outcome = outcome;
  h.retries = retries;
  h.last_message = message;
  return h;
}

TEST_CASE("every object handled is True; one not handled yet is Unknown; before the first list, Unknown") {
  const std::vector<SharedSnapshotObject> none;
  CHECK(DeriveNodeCondition(kWidgets, none, {true, 3, 0}) ==
        NodeConditionValue{"True", "AllHandled", "every object of widgets.example.com/v1 is handled on this node"});
  // Objects coming and going while all are handled change nothing: no write.
  CHECK(DeriveNodeCondition(kWidgets, none, {true, 4, 0}) == DeriveNodeCondition(kWidgets, none, {true, 3, 0}));
  CHECK(DeriveNodeCondition(kWidgets, none, {true, 3, 1}) ==
        NodeConditionValue{"Unknown", "InProgress", "1 object of 3 in progress on this node"});
  CHECK(DeriveNodeCondition(kWidgets, none, {false, 0, 0}).reason == "Starting");
  // Multi-step work under way (exit 100) is in progress, not a failure.
  std::vector<SharedSnapshotObject> stepping{Object("a", {Handler("create", "in_progress", 0)})};
  CHECK(DeriveNodeCondition(kWidgets, stepping, {true, 1, 1}).status == "Unknown");
}

TEST_CASE("a failing handler makes it False, naming the first failing object and its message") {
  std::vector<SharedSnapshotObject> objects{Object("a"), Object("b", {Handler("update", "failed", 2, "disk full")}),
                                  Object("c", {Handler("create", "permanent_failure", 5, "no such device")}),
                                  Object("d", {Handler("create", "failed", 1)}, "gadgets.example.com/v1")};
  NodeConditionValue v = DeriveNodeCondition(kWidgets, objects, {true, 3, 2});
  CHECK(v == NodeConditionValue{"False", "HooksFailing", "2 objects failing on this node; ns/b update: disk full"});
  // Still failing while it runs again after failures; never hidden behind "in progress".
  std::vector<SharedSnapshotObject> rerun{Object("b", {Handler("update", "running", 2)})};
  CHECK(DeriveNodeCondition(kWidgets, rerun, {true, 1, 1}).status == "False");
  // Another resource's failures are not this one's.
  CHECK(DeriveNodeCondition(ResourceScope(ResourceRef{"example.com", "v1", "gadgets", "", ""}), objects, {true, 1, 0})
            .status == "False");
  CHECK(DeriveNodeCondition(ResourceScope(ResourceRef{"example.com", "v1", "gadgets", "", ""}), {Object("a")},
                            {true, 1, 0})
            .status == "True");
  // Nor are those of the resource's entry in another namespace (one resource id in the store).
  const ResourceScope other(ResourceRef{"example.com", "v1", "widgets", "other", ""});
  CHECK(DeriveNodeCondition(other, objects, {true, 3, 0}).status == "True");
  std::vector<SharedSnapshotObject> mixed{Object("b", {Handler("update", "failed", 2)}),
                                          Object("e", {Handler("create", "failed", 1)}, "widgets.example.com/v1", "other")};
  CHECK(DeriveNodeCondition(other, mixed, {true, 1, 0}).message == "1 object failing on this node; other/e create");
}

TEST_CASE("a long message is cut on a character boundary") {
  std::string message(2000, 'x');
  message.replace(kNodeConditionMessageLimit - 10, 2, "\xC3\xA9");  // a two-byte character near the cut
  std::vector<SharedSnapshotObject> objects{Object("a", {Handler("create", "failed", 1, message)})};
  const std::string cut = DeriveNodeCondition(kWidgets, objects, {true, 1, 1}).message;
  CHECK(cut.size() <= kNodeConditionMessageLimit);
  CHECK(cut.substr(cut.size() - 3) == "...");
}

}  // namespace
}  // namespace nodehook
