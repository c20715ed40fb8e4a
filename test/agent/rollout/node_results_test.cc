#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "agent/rollout/rules/node_results.h"

using namespace nodehook;

namespace {

std::map<std::string, NodeResult> Decoded(const std::string& json) {
  std::map<std::string, NodeResult> out;
  REQUIRE(DecodeNodeResults(json, &out).ok());
  return out;
}

}  // namespace

TEST_CASE("results round-trip in the compact form, messages with spaces included") {
  std::map<std::string, NodeResult> results{
      {"u1", NodeResult{"00aa", false, 1700000000123, "exited 0"}},
      {"u2", NodeResult{"00bb", true, 1700000000456, "exit code 3: disk full on /var"}},
      {"u3", NodeResult{"00cc", false, 5, ""}}};
  EncodedResults encoded = EncodeNodeResults(results);
  CHECK(encoded.json == R"({"u1":"done 00aa 1700000000123 exited 0",)"
                        R"("u2":"failed 00bb 1700000000456 exit code 3: disk full on /var","u3":"done 00cc 5"})");
  CHECK(encoded.left_out == 0);
  auto back = Decoded(encoded.json);
  REQUIRE(back.size() == 3);
  CHECK(back["u2"].failed);
  CHECK(back["u2"].message == "exit code 3: disk full on /var");
  CHECK(back["u1"].at_ms == 1700000000123);
  CHECK(back["u3"].message.empty());
}

TEST_CASE("the older form of results is still read") {
  auto back = Decoded(R"({"u1":{"state":"00aa","result":"failed","at_ms":42,"message":"boom"}})");
  CHECK(back["u1"].state == "00aa");
  CHECK(back["u1"].failed);
  CHECK(back["u1"].at_ms == 42);
  CHECK(back["u1"].message == "boom");
}

TEST_CASE("unreadable results name the annotation and the entry") {
  std::map<std::string, NodeResult> out;
  Status bad = DecodeNodeResults(R"({"u1":"maybe 00aa 1"})", &out);
  CHECK(bad.code() == StatusCode::kInvalid);
  CHECK_THAT(bad.message(), Catch::Contains("nodehook.io/rollout-results") && Catch::Contains("u1"));
  CHECK(DecodeNodeResults(R"({"u1":"done 00aa soon"})", &out).code() == StatusCode::kInvalid);
  CHECK(DecodeNodeResults(R"({"u1":7})", &out).code() == StatusCode::kInvalid);
  CHECK(DecodeNodeResults("[1]", &out).code() == StatusCode::kInvalid);
}

TEST_CASE("over the budget: done messages go first, then failed ones are cut, then the oldest done results") {
  std::map<std::string, NodeResult> results;
  for (int i = 0; i < 100; ++i) {
    results["done-" + std::to_string(100 + i)] = NodeResult{"00aa", false, 1000 + i, std::string(100, 'o')};
  }
  results["failed-1"] = NodeResult{"00aa", true, 1, std::string(100, 'f')};

  // Room for everything but the done messages.
  std::map<std::string, NodeResult> no_done_messages = results;
  for (auto& [uid, r] : no_done_messages) {
    if (!r.failed) r.message.clear();
  }
  const size_t without = EncodeNodeResults(no_done_messages).json.size();
  EncodedResults fit = EncodeNodeResults(results, without);
  CHECK(fit.left_out == 0);
  CHECK(fit.messages_cut == 100);
  auto back = Decoded(fit.json);
  CHECK(back["done-100"].message.empty());
  CHECK(back["failed-1"].message == std::string(100, 'f'));

  // Less room: the failed message is cut short too.
  EncodedResults cut = EncodeNodeResults(results, without - 50);
  CHECK(cut.left_out == 0);
  CHECK(Decoded(cut.json)["failed-1"].message == std::string(40, 'f'));

  // Far less: the oldest done results leave; the failed one stays.
  EncodedResults small = EncodeNodeResults(results, without / 2);
  CHECK(small.json.size() <= without / 2);
  CHECK(small.left_out > 0);
  auto kept = Decoded(small.json);
  CHECK(kept.count("failed-1") == 1);
  CHECK(kept.count("done-100") == 0);   // the oldest
  CHECK(kept.count("done-199") == 1);   // the newest
  CHECK(kept.size() == results.size() - small.left_out);
}

TEST_CASE("2,000 results fit the budget whole, 2,600 without their done messages") {
  std::map<std::string, NodeResult> results;
  for (int i = 0; i < 2000; ++i) {
    results["00000000-0000-0000-0000-" + std::to_string(100000000000 + i)] =
        NodeResult{"0123456789abcdef", false, 1764000000000 + i, "exited 0"};
  }
  EncodedResults encoded = EncodeNodeResults(results);
  CHECK(encoded.left_out == 0);
  CHECK(encoded.messages_cut == 0);
  for (int i = 2000; i < 2600; ++i) {
    results["00000000-0000-0000-0000-" + std::to_string(100000000000 + i)] =
        NodeResult{"0123456789abcdef", false, 1764000000000 + i, "exited 0"};
  }
  encoded = EncodeNodeResults(results);
  CHECK(encoded.left_out == 0);
  CHECK(encoded.messages_cut == 2600);
}

TEST_CASE("a canary's failure keeps its mark through the compact form") {
  std::map<std::string, NodeResult> results{{"u1", NodeResult{"00aa", true, 7, "boom"}}};
  results["u1"].canary = true;
  EncodedResults encoded = EncodeNodeResults(results);
  CHECK(encoded.json == R"({"u1":"failed-canary 00aa 7 boom"})");
  auto back = Decoded(encoded.json);
  CHECK(back["u1"].failed);
  CHECK(back["u1"].canary);
  CHECK_FALSE(Decoded(R"({"u1":"failed 00aa 7 boom"})")["u1"].canary);
}
