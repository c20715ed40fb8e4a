// Objects measured and quarantined one by one, and kept byte for byte (issue 8, items 1 and 2).
#include <catch2/catch.hpp>
#include <string>

#include "agent/kube/client/object_json.h"

namespace nodehook {
namespace {

// {"metadata":{...},"spec":{"x":{"x":...}}}: `depth` brackets from the object's own `{`.
std::string DeepWidget(const std::string& uid, int depth) {
  std::string json = R"({"metadata":{"name":"w-)" + uid + R"(","namespace":"ns","uid":")" + uid +
                     R"(","resourceVersion":"7"},"spec":)";
  for (int i = 2; i < depth; ++i) json += R"({"x":)";
  json += "{}";
  for (int i = 2; i < depth; ++i) json += "}";
  return json + "}";
}

std::string Widget(const std::string& uid) { return DeepWidget(uid, 2); }

std::string Event(const char* type, const std::string& object) {
  return std::string(R"({"type":")") + type + R"(","object":)" + object + "}";
}

std::string List(const std::vector<std::string>& items) {
  std::string json = R"({"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"9"},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) json += (i ? "," : "") + items[i];
  return json + "]}";
}

TEST_CASE("depth is counted from the object's own brace, in a watch event and in a list alike") {
  ObjectLimits limits{10, size_t{1} << 20};
  REQUIRE(DeepWidget("u", 10).find(std::string(9, '}')) != std::string::npos);
  auto at_limit = ParseWatchEvent(Event("ADDED", DeepWidget("u", 10)), limits);
  REQUIRE(at_limit.ok());
  CHECK_FALSE(at_limit->quarantined);
  auto listed = ParseObjectList(List({DeepWidget("u", 10)}), limits);
  REQUIRE(listed.ok());
  CHECK(listed->items.size() == 1);
  CHECK(listed->quarantined.empty());

  auto beyond = ParseWatchEvent(Event("ADDED", DeepWidget("u", 11)), limits);
  REQUIRE(beyond.ok());
  REQUIRE(beyond->quarantined);
  CHECK(beyond->quarantined->reason == "too_deep");
  CHECK(beyond->quarantined->message == "object is nested 11 levels deep; max_object_depth is 10");
}

TEST_CASE("a 10,000-level object the API server accepts is measured as 10,000 levels") {
  ObjectLimits server_limit{10000, size_t{16} << 20};
  auto event = ParseWatchEvent(Event("MODIFIED", DeepWidget("deep", 10000)), server_limit);
  REQUIRE(event.ok());
  CHECK_FALSE(event->quarantined);
  auto list = ParseObjectList(List({DeepWidget("deep", 10000)}), server_limit);
  REQUIRE(list.ok());
  CHECK(list->items.size() == 1);
}

TEST_CASE("a too-deep watch event is quarantined with the object's identity, not refused") {
  auto event = ParseWatchEvent(Event("DELETED", DeepWidget("poison", 10000)));
  REQUIRE(event.ok());
  CHECK(event->type == WatchEventType::kDeleted);
  REQUIRE(event->quarantined);
  CHECK(event->quarantined->meta.uid == "poison");
  CHECK(event->quarantined->meta.Key() == "ns/w-poison");
  CHECK(event->object.meta.resource_version == "7");
  CHECK(event->object.json.empty());
}

TEST_CASE("a list with one poison item still lists the rest") {
  auto list = ParseObjectList(List({Widget("a"), DeepWidget("poison", 5000), Widget("b")}));
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 2);
  CHECK(list->items[0].meta.uid == "a");
  CHECK(list->items[1].meta.uid == "b");
  REQUIRE(list->quarantined.size() == 1);
  CHECK(list->quarantined[0].meta.uid == "poison");
  CHECK(list->quarantined[0].reason == "too_deep");
  CHECK(list->resource_version == "9");
}

TEST_CASE("an object over max_object_bytes is quarantined as too big") {
  std::string big = R"({"metadata":{"name":"big","uid":"u-big"},"spec":{"blob":")" + std::string(5000, 'x') + R"("}})";
  ObjectLimits limits{1000, 4096};
  auto event = ParseWatchEvent(Event("ADDED", big), limits);
  REQUIRE(event.ok());
  REQUIRE(event->quarantined);
  CHECK(event->quarantined->reason == "too_big");
  CHECK(event->quarantined->meta.uid == "u-big");
  CHECK_THAT(event->quarantined->message, Catch::Contains("max_object_bytes is 4096"));
  auto list = ParseObjectList(List({big, Widget("small")}), limits);
  REQUIRE(list.ok());
  CHECK(list->items.size() == 1);
  CHECK(list->quarantined.size() == 1);
}

// Numbers and escapes that a parse-and-rewrite round trip changes.
const char* kExactSpec =
    R"({"f":123456789.12345679,"g":0.30000000000000004,"neg_zero":-0,"neg_zero_f":-0.0,)"
    R"("i63":9223372036854775807,"u64":18446744073709551615,"beyond":18446744073709551616,)"
    R"("exp":1E+2,"s":"caf\u00e9 \ud83d\ude00 nul\u0000 \/"})";

TEST_CASE("a watched object reaches us byte for byte, numbers and escapes untouched") {
  std::string object = R"({"apiVersion":"example.com/v1","kind":"Widget",)"
                       R"("metadata":{"name":"n","uid":"u"},"spec":)" + std::string(kExactSpec) + "}";
  auto event = ParseWatchEvent(Event("ADDED", object));
  REQUIRE(event.ok());
  CHECK(event->object.json == object);
}

TEST_CASE("a listed item keeps its bytes; a missing kind and apiVersion are inserted in front") {
  std::string item = R"({"metadata":{"name":"n","uid":"u"},"spec":)" + std::string(kExactSpec) + "}";
  auto list = ParseObjectList(List({item}));
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 1);
  CHECK(list->items[0].json == R"({"apiVersion":"example.com/v1","kind":"Widget",)" + item.substr(1));

  std::string complete = R"({"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"n","uid":"u"}})";
  auto kept = ParseObjectList(List({complete}));
  REQUIRE(kept.ok());
  CHECK(kept->items[0].json == complete);
}

TEST_CASE("a GET body's trailing newline is not part of the object") {
  auto obj = ParseObject(" {\"metadata\":{\"name\":\"n\",\"uid\":\"u\"}}\n");
  REQUIRE(obj.ok());
  CHECK(obj->json == R"({"metadata":{"name":"n","uid":"u"}})");
}

TEST_CASE("metadata strings are decoded from their escapes") {
  auto obj = ParseObject(R"({"metadata":{"name":"caf\u00e9","uid":"u\"1","namespace":"n\/s"}})");
  REQUIRE(obj.ok());
  CHECK(obj->meta.name == "caf\xc3\xa9");
  CHECK(obj->meta.uid == "u\"1");
  CHECK(obj->meta.namespace_name == "n/s");
}

}  // namespace
}  // namespace nodehook
