#include "agent/kube/client/object_json.h"

#include <catch2/catch.hpp>
#include <string>

#include "test/agent/kube/refusals.h"

namespace nodehook {
namespace {

const char* kWidget =
    R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns",)"
    R"("uid":"u-1","resourceVersion":"42"},"spec":{"size":3}})";

TEST_CASE("an object's metadata is read and its JSON kept verbatim") {
  auto obj = ParseObject(kWidget);
  REQUIRE(obj.ok());
  CHECK(obj->meta.name == "a");
  CHECK(obj->meta.namespace_name == "ns");
  CHECK(obj->meta.uid == "u-1");
  CHECK(obj->meta.resource_version == "42");
  CHECK_FALSE(obj->meta.deleting);
  CHECK(obj->meta.Key() == "ns/a");
  CHECK(obj->json == kWidget);
}

TEST_CASE("metadata strings are read with their escapes resolved, and plain ones as they are") {
  auto escaped = ParseObject(R"({"metadata":{"name":"wid\u0067et-\"1\"","namespace":"a\\b","uid":"u\/1",)"
                             R"("resourceVersion":"\u00e9t\u00e9 \ud83d\ude00"}})");
  REQUIRE(escaped.ok());
  CHECK(escaped->meta.name == "widget-\"1\"");
  CHECK(escaped->meta.namespace_name == "a\\b");
  CHECK(escaped->meta.uid == "u/1");
  CHECK(escaped->meta.resource_version == "\u00e9t\u00e9 \U0001F600");
  // Without a backslash: the bytes between the quotes, UTF-8 and slashes included.
  auto plain = ParseObject(R"({"metadata":{"name":"été","uid":"u/1 ?","namespace":"","resourceVersion":""}})");
  REQUIRE(plain.ok());
  CHECK(plain->meta.name == "\u00e9t\u00e9");
  CHECK(plain->meta.uid == "u/1 ?");
  CHECK(plain->meta.namespace_name.empty());
  CHECK(plain->meta.resource_version.empty());
  // An escaped control character reads as one; a raw one is refused by the scanner.
  auto control = ParseObject(R"({"metadata":{"name":"a\tb","uid":"u"}})");
  REQUIRE(control.ok());
  CHECK(control->meta.name == "a\tb");
  CHECK_FALSE(ParseObject("{\"metadata\":{\"name\":\"a\tb\",\"uid\":\"u\"}}").ok());
  auto event = ParseWatchEvent(R"({"type":"MOD\u0049FIED","object":)" + std::string(kWidget) + "}", ObjectLimits{});
  REQUIRE(event.ok());
  CHECK(event->object.meta.name == "a");
}

TEST_CASE("a deletionTimestamp marks the object as deleting, a null one does not") {
  auto deleting = ParseObject(
      R"({"metadata":{"name":"a","uid":"u","deletionTimestamp":"2026-01-01T00:00:00Z"}})");
  REQUIRE(deleting.ok());
  CHECK(deleting->meta.deleting);
  auto not_deleting = ParseObject(R"({"metadata":{"name":"a","uid":"u","deletionTimestamp":null}})");
  REQUIRE(not_deleting.ok());
  CHECK_FALSE(not_deleting->meta.deleting);
}

TEST_CASE("malformed objects are refused with the field and what was expected") {
  const std::vector<Refusal> cases = {
      {"", "malformed JSON at offset 0"},
      {"{\"metadata\":", "malformed JSON"},
      {"[1,2]", "expected a JSON object"},
      {"{}", "field 'metadata': expected a JSON object"},
      {R"({"metadata":{"uid":"u"}})", "field 'metadata.name': expected a non-empty string"},
      {R"({"metadata":{"name":"a"}})", "field 'metadata.uid'"},
      {R"({"metadata":{"name":"a","uid":"u","namespace":7}})", "field 'metadata.namespace': expected a string"},
      {R"({"metadata":{"name":"a","uid":"u"}} trailing)", "malformed JSON"},
  };
  CheckRefusals(cases, [](const std::string& json) { return ParseObject(json); }, StatusCode::kInvalid);
}

TEST_CASE("absurdly deep nesting is refused instead of overflowing the stack") {
  std::string deep = R"({"metadata":{"name":"a","uid":"u"},"x":)" + std::string(200000, '[') +
                     std::string(200000, ']') + "}";
  auto obj = ParseObject(deep);
  REQUIRE_FALSE(obj.ok());
  CHECK_THAT(obj.status().message(), Catch::Contains("nested 200001 levels deep; max_object_depth is 1000"));
}

TEST_CASE("a list yields its items, resourceVersion and continue token") {
  auto list = ParseObjectList(
      R"({"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"100","continue":"c2"},)"
      R"("items":[{"metadata":{"name":"a","uid":"1"}},{"kind":"Widget","metadata":{"name":"b","uid":"2"}}]})");
  REQUIRE(list.ok());
  CHECK(list->resource_version == "100");
  CHECK(list->continue_token == "c2");
  REQUIRE(list->items.size() == 2);
  CHECK(list->items[1].meta.name == "b");
  SECTION("items without kind get it from the list") {
    auto item = ParseObject(list->items[0].json);
    REQUIRE(item.ok());
    CHECK_THAT(item->json, Catch::Contains(R"("kind":"Widget")"));
    CHECK_THAT(item->json, Catch::Contains(R"("apiVersion":"example.com/v1")"));
  }
}

TEST_CASE("an empty list may send null items") {
  auto list = ParseObjectList(R"({"metadata":{"resourceVersion":"7"},"items":null})");
  REQUIRE(list.ok());
  CHECK(list->items.empty());
  CHECK(list->continue_token.empty());
}

TEST_CASE("a list item with unreadable metadata is quarantined by its index, and the rest is listed") {
  auto list = ParseObjectList(R"({"metadata":{},"items":[{"metadata":{"name":"a","uid":"1"}},{"metadata":{}}]})");
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 1);
  REQUIRE(list->quarantined.size() == 1);
  CHECK(list->quarantined[0].reason == "malformed");
  CHECK_THAT(list->quarantined[0].message, Catch::Contains("list item 1") && Catch::Contains("metadata.uid"));
  CHECK_THAT(ParseObjectList(R"({"metadata":{},"items":{}})").status().message(),
             Catch::Contains("field 'items': expected an array"));
}

TEST_CASE("watch events carry their type and object") {
  auto ev = ParseWatchEvent(std::string(R"({"type":"MODIFIED","object":)") + kWidget + "}\n");
  REQUIRE(ev.ok());
  CHECK(ev->type == WatchEventType::kModified);
  CHECK(ev->object.meta.uid == "u-1");
  CHECK(ev->object.json == kWidget);
}

TEST_CASE("a bookmark needs only a resourceVersion") {
  auto ev = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Widget","metadata":{"resourceVersion":"555"}}})");
  REQUIRE(ev.ok());
  CHECK(ev->type == WatchEventType::kBookmark);
  CHECK(ev->object.meta.resource_version == "555");
}

TEST_CASE("the bookmark that ends a streaming list's initial events is marked, others are not") {
  auto end = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Widget","metadata":{"resourceVersion":"9",)"
      R"("annotations":{"k8s.io/initial-events-end":"true"}}}})");
  REQUIRE(end.ok());
  CHECK(end->initial_events_end);
  CHECK(end->object.meta.resource_version == "9");
  auto plain = ParseWatchEvent(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->initial_events_end);
  auto other = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"false"}}}})");
  REQUIRE(other.ok());
  CHECK_FALSE(other->initial_events_end);
}

TEST_CASE("an ERROR event exposes the Status code and message") {
  auto ev = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"j("message":"too old resource version: 1 (2)","reason":"Expired","code":410}})j");
  REQUIRE(ev.ok());
  CHECK(ev->type == WatchEventType::kError);
  CHECK(ev->error_code == 410);
  CHECK(ev->error_message == "too old resource version: 1 (2)");
}

TEST_CASE("malformed watch lines are refused with a clear reason") {
  const std::vector<Refusal> cases = {
      {"not json", "malformed JSON"},
      {R"({"object":{}})", "field 'type'"},
      {R"({"type":"ADDED"})", "field 'object': expected a JSON object"},
      {R"({"type":"RENAMED","object":{}})", "got 'RENAMED'"},
      {R"({"type":"ERROR","object":{"code":"410"}})", "field 'code': expected an integer"},
  };
  CheckRefusals(cases, [](const std::string& line) { return ParseWatchEvent(line); }, StatusCode::kInvalid);
}

TEST_CASE("a Status body yields code, reason and message") {
  auto st = ParseApiStatus(R"({"kind":"Status","code":404,"reason":"NotFound","message":"widgets \"x\" not found"})");
  REQUIRE(st.ok());
  CHECK(st->code == 404);
  CHECK(st->reason == "NotFound");
  CHECK(st->message == "widgets \"x\" not found");
  CHECK_FALSE(ParseApiStatus("<html>").ok());
}

}  // namespace
}  // namespace nodehook
