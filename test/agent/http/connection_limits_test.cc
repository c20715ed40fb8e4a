#include <catch2/catch.hpp>

#include "agent/http/connection_limits.h"

namespace nodehook {
namespace {

std::vector<OpenConnectionView> Open(std::initializer_list<OpenConnectionView> list) { return list; }

TEST_CASE("below both caps a new connection is simply admitted") {
  Admission a = AdmitConnection(Open({{"10.0.0.1", true}}), "10.0.0.2", ConnectionLimits{4, 2});
  CHECK(a.admit);
  CHECK_FALSE(a.evict);
}

TEST_CASE("a peer at its cap gives up its own oldest idle connection, never another peer's") {
  auto open = Open({{"10.0.0.9", true}, {"10.0.0.1", false}, {"10.0.0.1", true}, {"10.0.0.1", true}});
  Admission a = AdmitConnection(open, "10.0.0.1", ConnectionLimits{100, 3});
  CHECK(a.admit);
  REQUIRE(a.evict);
  CHECK(*a.evict == 2);  // index 1 is answering, index 0 belongs to someone else
}

TEST_CASE("a peer at its cap with every connection answering gets its new one refused") {
  auto open = Open({{"10.0.0.1", false}, {"10.0.0.1", false}});
  Admission a = AdmitConnection(open, "10.0.0.1", ConnectionLimits{100, 2});
  CHECK_FALSE(a.admit);
  CHECK_FALSE(a.evict);
}

TEST_CASE("at the global cap the heaviest peer loses its oldest idle connection") {
  auto open = Open({{"kubelet", true}, {"a", true}, {"b", true}, {"a", true}, {"a", true}, {"b", true}});
  Admission a = AdmitConnection(open, "newcomer", ConnectionLimits{6, 8});
  CHECK(a.admit);
  REQUIRE(a.evict);
  CHECK(*a.evict == 1);  // "a" holds three
}

TEST_CASE("at the global cap, among equally heavy peers, the oldest idle connection goes") {
  auto open = Open({{"a", false}, {"b", true}, {"a", true}, {"b", true}});
  Admission a = AdmitConnection(open, "c", ConnectionLimits{4, 8});
  REQUIRE(a.evict);
  CHECK(*a.evict == 1);
}

TEST_CASE("at the global cap with nothing idle the new connection is refused") {
  Admission a = AdmitConnection(Open({{"a", false}, {"b", false}}), "c", ConnectionLimits{2, 8});
  CHECK_FALSE(a.admit);
}

}  // namespace
}  // namespace nodehook
