#include "agent/readiness/node_ready_reporter.h"

#include <catch2/catch.hpp>

#include "agent/readiness/ready_records.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fixed_server_clock.h"
#include "test/fakes/in_memory_api.h"

namespace nodehook {
namespace {

struct Node {
  explicit Node(const std::string& name = "n1") {
    resource.ref = ResourceRef{"example.com", "v1", "widgets", "ns", ""};
    resource.ready_condition = "Ready";
    report.synced = true;
    options.node = name;
    options.namespace_name = "nodehook";
    options.report = [this] { return report; };
    options.presence = [this] { return presence; };
  }
  NodeReadyReporter Reporter() { return NodeReadyReporter(resource, client, clock, server, options); }
  RolloutLease Record() {
    return *ParseRolloutLease(client.Find(ReadyRecordName(RolloutIdOf(resource.ref), options.node)).value().json);
  }

  WatchedResource resource;
  InMemoryApi client;
  FakeClock clock;
  FixedServerClock server;
  ReadyReport report;
  NodePresence presence{"node-uid", false, LabelMap{{"zone", "a"}}};
  NodeReadyReporterOptions options;
};

NodeResult Done(const std::string& state) { return NodeResult{state, false, 0, "", false}; }
NodeResult Failing(const std::string& state, const std::string& message) {
  return NodeResult{state, true, 0, message, false};
}

TEST_CASE("a node's record holds each object's handled or failing state, written once per change") {
  Node n;
  n.report.known = {"u1", "u2"};
  n.report.results = {{"u1", Done("s1")}};
  NodeReadyReporter reporter = n.Reporter();
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == 1);
  RolloutLease record = n.Record();
  CHECK(record.holder == "n1");
  CHECK(record.owner_uid == "node-uid");
  CHECK(record.labels == LabelMap{{"zone", "a"}});
  REQUIRE(record.results.size() == 1);
  CHECK(record.results.at("u1").state == "s1");
  CHECK(record.results.at("u1").at_ms == 1000);

  // Nothing new: nothing written.
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == 1);

  // u2 starts failing; u1 and u2 change within one round: one write.
  n.report.results["u2"] = Failing("s1", "create: exited 1");
  n.report.results["u1"] = Done("s2");
  n.server.now_ms = 2000;
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == 2);
  record = n.Record();
  CHECK(record.results.at("u2").failed);
  CHECK(record.results.at("u2").message == "create: exited 1");
  CHECK(record.results.at("u1").at_ms == 2000);

  // Only the failing hook's message changed (a retry): no write.
  n.report.results["u2"] = Failing("s1", "create: exited 1 at retry 2");
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == 2);

  // An object not settled here yet keeps its older result; one this node no longer knows goes.
  n.report.results.erase("u1");
  n.report.known = {"u1"};
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == 3);
  record = n.Record();
  CHECK(record.results.size() == 1);
  CHECK(record.results.at("u1").state == "s2");
}

TEST_CASE("a restarted agent finds its record as it was and writes nothing") {
  Node n;
  n.report.known = {"u1"};
  n.report.results = {{"u1", Done("s1")}};
  REQUIRE(n.Reporter().Round().ok());
  REQUIRE(n.client.writes() == 1);
  // After the restart nothing is settled yet, then everything again: no write either way.
  NodeReadyReporter restarted = n.Reporter();
  n.report.results.clear();
  n.presence = NodePresence{};  // its Node not listed yet either
  REQUIRE(restarted.Round().ok());
  n.presence = NodePresence{"node-uid", false, LabelMap{{"zone", "a"}}};
  n.report.results = {{"u1", Done("s1")}};
  REQUIRE(restarted.Round().ok());
  CHECK(n.client.writes() == 1);
}

TEST_CASE("a record an earlier version wrote under the hashed name moves to the node's name, and goes") {
  Node n;
  const std::string rid = RolloutIdOf(n.resource.ref);
  CHECK(ReadyRecordName(rid, "n1") == "nodehook-ready-" + rid + "-node-n1");
  RolloutLease old;
  old.name = HashedNodeLeaseName("ready", rid, "n1");
  old.kind = "node";
  old.holder = "n1";
  old.lease_duration_seconds = 86400;
  old.owner_uid = "node-uid";
  old.labels = LabelMap{{"zone", "a"}};
  old.results = {{"u1", NodeResult{"s1", false, 500, "", false}}};
  n.client.Put("nodehook", ReadyRecordJson("nodehook", rid, old));
  n.report.known = {"u1"};
  n.report.results = {{"u1", Done("s1")}};
  REQUIRE(n.Reporter().Round().ok());
  CHECK(n.client.writes() == 1);  // the record under its new name; the old one deleted
  CHECK(n.Record().results.at("u1").at_ms == 500);  // settled then, not now
  CHECK_FALSE(n.client.Has(old.name));
}

TEST_CASE("a node registers before its first list, and writes no results until it has one") {
  Node n;
  n.report.synced = false;
  n.report.known = {"u1"};
  NodeReadyReporter reporter = n.Reporter();
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == 1);
  CHECK(n.Record().results.empty());
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == 1);
}

TEST_CASE("a record deleted or changed by someone else is written again; a gone Node's never") {
  Node n;
  n.report.known = {"u1"};
  n.report.results = {{"u1", Done("s1")}};
  NodeReadyReporter reporter = n.Reporter();
  REQUIRE(reporter.Round().ok());
  n.client.RemoveAll();
  n.report.results = {{"u1", Done("s2")}};
  REQUIRE(reporter.Round().ok());
  CHECK(n.Record().results.at("u1").state == "s2");

  n.presence.gone = true;
  n.report.results = {{"u1", Done("s3")}};
  const int before = n.client.writes();
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == before);

  n.client.FailAll(UnavailableError("away"));
  n.presence.gone = false;
  CHECK(reporter.Round().code() == StatusCode::kUnavailable);
}

TEST_CASE("a record deleted or edited by hand is read again within the recheck and written again, with no change") {
  Node n;
  n.options.recheck = std::chrono::minutes(5);
  n.report.known = {"u1", "u2"};
  n.report.results = {{"u1", Done("s1")}, {"u2", Failing("s2", "no disk")}};
  NodeReadyReporter reporter = n.Reporter();
  REQUIRE(reporter.Round().ok());
  const std::string name = ReadyRecordName(RolloutIdOf(n.resource.ref), "n1");
  int writes = n.client.writes();
  // Rounds before the recheck read nothing and write nothing.
  n.client.RemoveAll();
  n.clock.Advance(std::chrono::minutes(4));
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == writes);
  CHECK_FALSE(n.client.Has(name));
  n.clock.Advance(std::chrono::minutes(1));
  REQUIRE(reporter.Round().ok());  // read again: gone, so written again as it was
  CHECK(n.client.writes() == writes + 1);
  REQUIRE(n.client.Has(name));
  CHECK(n.Record().results.at("u1").state == "s1");
  CHECK(n.Record().results.at("u2").message == "no disk");
  // Someone's annotation alone: read again, nothing to write.
  const KubeObject record = n.client.Find(name).value();
  n.client.Put("nodehook", record.json);
  writes = n.client.writes();
  n.clock.Advance(std::chrono::minutes(5));
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == writes);
  // kubectl edit took a result out (the object's condition would miss this node): written again.
  RolloutLease edited = n.Record();
  edited.results.erase("u1");
  n.client.Put("nodehook", ReadyRecordJson("nodehook", RolloutIdOf(n.resource.ref), edited));
  n.clock.Advance(std::chrono::minutes(5));
  REQUIRE(reporter.Round().ok());
  CHECK(n.client.writes() == writes + 1);
  CHECK(n.Record().results.at("u1").state == "s1");
}

}  // namespace
}  // namespace nodehook
