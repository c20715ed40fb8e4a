// LeaseRecord's JSON form: what leader election reads back of what it wrote, standbys included.
#include "agent/kube/client/lease_record.h"

#include <catch2/catch.hpp>

namespace nodehook {
namespace {

TEST_CASE("a lease written with standbys reads back with them, and without them reads none") {
  LeaseRecord record{"node-a_uid1", 15, "2026-12-03T10:00:00.000000Z", "2026-12-03T10:00:02.000000Z", 3, "41", ""};
  record.standbys = "node-b,node-c";
  record.fleet_size = 5000;
  auto parsed = ParseLease(LeaseJson("ns", "lease", record, {}, LeaseNotes(record)));
  REQUIRE(parsed.ok());
  CHECK(parsed->holder == "node-a_uid1");
  CHECK(parsed->transitions == 3);
  CHECK(parsed->resource_version == "41");
  CHECK(parsed->standbys == "node-b,node-c");
  CHECK(parsed->fleet_size == 5000);

  auto bare = ParseLease(LeaseJson("ns", "lease", record));
  REQUIRE(bare.ok());
  CHECK(bare->standbys.empty());
  CHECK(bare->fleet_size == 0);
  auto odd = ParseLease(LeaseJson("ns", "lease", record, {}, {{kFleetSizeAnnotation, "many"}}));
  REQUIRE(odd.ok());  // a note, not the election: an unreadable one is not said
  CHECK(odd->fleet_size == 0);
}

TEST_CASE("a standby is named by its node, with or without the pod uid in the identity") {
  CHECK(NamedStandby("node-b,node-c", "node-c"));
  CHECK(NamedStandby("node-b,node-c", "node-b_0f3e"));
  CHECK_FALSE(NamedStandby("node-b,node-c", "node-bb"));     // a prefix of another name is not it
  CHECK_FALSE(NamedStandby("node-b,node-c", "node-bb_0f3e"));
  CHECK_FALSE(NamedStandby("node-b,node-c", "node"));
  CHECK_FALSE(NamedStandby("", "node-b"));
  CHECK_FALSE(NamedStandby(",,", ""));
}

}  // namespace
}  // namespace nodehook
