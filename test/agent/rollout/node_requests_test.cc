// A node's requests on its node Lease: what the coordinator reads back is what the node asked.
#include <catch2/catch.hpp>

#include "agent/rollout/rules/node_requests.h"

namespace nodehook {
namespace {

TEST_CASE("requests round-trip, a started one saying so and a new one leaving the key out") {
  std::map<std::string, NodeRequest> asked;
  asked["u1"] = NodeRequest{"s1", "shop/kernel", "", LabelMap{{"pool", "a"}}};
  asked["u2"] = NodeRequest{"s2", "/cluster-wide", "s2", std::nullopt, true};
  const std::string json = EncodeNodeRequests(asked);
  CHECK(json == R"({"u1":{"state":"s1","object":"shop/kernel","selector":{"pool":"a"}},)"
                R"("u2":{"state":"s2","object":"/cluster-wide","resume":"s2","started":true}})");
  std::map<std::string, NodeRequest> read;
  REQUIRE(DecodeNodeRequests(json, &read).ok());
  CHECK(read == asked);
}

TEST_CASE("a request without a state is refused, naming the entry") {
  std::map<std::string, NodeRequest> read;
  Status bad = DecodeNodeRequests(R"({"u1":{"object":"a/b"}})", &read);
  CHECK(bad.code() == StatusCode::kInvalid);
  CHECK(bad.message() == "nodehook.io/rollout-requests: entry u1: expected an object with a state");
  CHECK(DecodeNodeRequests("[]", &read).code() == StatusCode::kInvalid);
  CHECK(EncodeNodeRequests({}).empty());
}

}  // namespace
}  // namespace nodehook
