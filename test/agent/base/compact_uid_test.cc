#include "agent/base/compact_uid.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace nodehook {
namespace {

std::string RandomUuid(std::mt19937_64& rng) {
  static const char kHex[] = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < 36; ++i) text += (i == 8 || i == 13 || i == 18 || i == 23) ? '-' : kHex[rng() % 16];
  return text;
}

TEST_CASE("a canonical UUID is held as its value and given back as the same text") {
  const std::string uuid = "0f3c9a52-7b1e-4d2a-9c8e-5a6b7c8d9e0f";
  CompactUid uid(uuid);
  CHECK(uid.compact());
  CHECK(uid.str() == uuid);
  CHECK(CompactUid("00000000-0000-0000-0000-000000000000").str() == "00000000-0000-0000-0000-000000000000");
  CHECK(CompactUid("ffffffff-ffff-ffff-ffff-ffffffffffff").str() == "ffffffff-ffff-ffff-ffff-ffffffffffff");
}

TEST_CASE("any other text is kept as it is, and never equals a UUID's value") {
  for (const char* text : {"u1", "uid-a", "", "0F3C9A52-7B1E-4D2A-9C8E-5A6B7C8D9E0F",  // uppercase: another text
                           "0f3c9a52-7b1e-4d2a-9c8e-5a6b7c8d9e0", "0f3c9a527b1e-4d2a-9c8e-5a6b7c8d9e0f0",
                           "0f3c9a52-7b1e-4d2a-9c8e-5a6b7c8d9e0g"}) {
    CompactUid uid(text);
    CHECK_FALSE(uid.compact());
    CHECK(uid.str() == text);
  }
  CHECK(CompactUid("0F3C9A52-7B1E-4D2A-9C8E-5A6B7C8D9E0F") != CompactUid("0f3c9a52-7b1e-4d2a-9c8e-5a6b7c8d9e0f"));
}

TEST_CASE("uids compare and order exactly as their texts, UUIDs and other texts mixed") {
  const uint64_t seed = GENERATE(1u, 2u, 3u, 4u);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  std::vector<std::string> texts = {"u1", "uid-a", "zzz", "0", "g"};
  for (int i = 0; i < 200; ++i) texts.push_back(RandomUuid(rng));
  texts.push_back(texts.back());  // a duplicate
  for (const std::string& a : texts) {
    for (const std::string& b : texts) {
      REQUIRE((CompactUid(a) < CompactUid(b)) == (a < b));
      REQUIRE((CompactUid(a) == CompactUid(b)) == (a == b));
    }
  }
  // A map keyed by them lists the texts in the order a map of strings would.
  std::map<CompactUid, int> by_uid;
  for (const std::string& t : texts) by_uid[CompactUid(t)] = 0;
  std::vector<std::string> listed;
  for (const auto& [uid, unused] : by_uid) listed.push_back(uid.str());
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  CHECK(listed == texts);
}

TEST_CASE("a copy is equal and independent of what it was copied from") {
  CompactUid text("uid-a");
  CompactUid copy = text;
  CHECK(copy == text);
  text = CompactUid("uid-b");
  CHECK(copy.str() == "uid-a");
  CompactUid moved = std::move(copy);
  CHECK(moved.str() == "uid-a");
}

}  // namespace
}  // namespace nodehook
