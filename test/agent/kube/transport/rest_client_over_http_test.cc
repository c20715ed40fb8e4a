// The real cpprest transport and RestKubeClient against FakeApiServer on loopback:
// what the fake transport cannot show (HTTP chunking, dropped sockets, stalls, cancellation).
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/kube/client/rest_kube_client.h"
#include "test/agent/kube/client/kube_test_data.h"
#include "test/fakes/fake_api_server.h"

namespace nodehook {
namespace {

using std::chrono::seconds;
// Safety nets so a broken build fails instead of hanging; never reached when things work.
constexpr auto kGenerous = seconds(20);

struct HttpFixture {
  FakeApiServer server;
  std::unique_ptr<RestKubeClient> client;

  explicit HttpFixture(int idle_timeout_seconds = 60) {
    TransportConfig config;
    config.server = server.url();
    config.bearer_token = [] { return std::string("test-token"); };
    config.idle_timeout_seconds = idle_timeout_seconds;
    client = std::make_unique<RestKubeClient>(NewCpprestTransport(config));
  }
};

FakeResponse Chunks(std::vector<std::string> chunks, FakeResponse::Ending ending = FakeResponse::Ending::kComplete) {
  FakeResponse r;
  r.chunks = std::move(chunks);
  r.ending = ending;
  return r;
}

// Splits `text` into pieces of `size` bytes, so events straddle HTTP chunks.
std::vector<std::string> Pieces(const std::string& text, size_t size) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); i += size) out.push_back(text.substr(i, size));
  return out;
}

TEST_CASE("over HTTP: a list is fetched with the bearer token") {
  HttpFixture f;
  FakeResponse list = Chunks({WidgetListJson("77", "", WidgetJson("a", "70") + "," + WidgetJson("b", "71"))});
  list.chunked = false;
  f.server.Enqueue(list);
  auto result = f.client->List(WidgetsRef(), {});
  REQUIRE(result.ok());
  CHECK(result->items.size() == 2);
  CHECK(result->resource_version == "77");
  auto requests = f.server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].target == "/apis/example.com/v1/widgets?limit=500");
  CHECK(requests[0].Header("authorization") == "Bearer test-token");
  CHECK(requests[0].Header("accept") == "application/json");
}

TEST_CASE("over HTTP: watch events split across many chunks arrive whole") {
  HttpFixture f;
  std::string body;
  for (int i = 0; i < 20; ++i) body += EventLine("ADDED", WidgetJson("w" + std::to_string(i), std::to_string(i)));
  body += EventLine("BOOKMARK", R"({"kind":"Widget","metadata":{"resourceVersion":"99"}})");
  f.server.Enqueue(Chunks(Pieces(body, 37)));
  std::vector<WatchEvent> events;
  CancelToken cancel;
  WatchOptions o;
  o.resource_version = "5";
  Status st = f.client->Watch(WidgetsRef(), o, [&](WatchEvent e) { events.push_back(std::move(e)); }, cancel);
  REQUIRE(st.ok());
  REQUIRE(events.size() == 21);
  CHECK(events[19].object.meta.name == "w19");
  CHECK(events[20].object.meta.resource_version == "99");
  CHECK(f.server.requests().at(0).target ==
        "/apis/example.com/v1/widgets?watch=1&resourceVersion=5&allowWatchBookmarks=true&timeoutSeconds=300");
}

TEST_CASE("over HTTP: a stream cut in the middle of an event is an error after the earlier events") {
  HttpFixture f;
  std::string first = EventLine("ADDED", WidgetJson("a", "1"));
  std::string second = EventLine("ADDED", WidgetJson("b", "2"));
  f.server.Enqueue(Chunks({first + second.substr(0, 25)}, FakeResponse::Ending::kDropConnection));
  std::vector<WatchEvent> events;
  CancelToken cancel;
  Status st = f.client->Watch(WidgetsRef(), {}, [&](WatchEvent e) { events.push_back(std::move(e)); }, cancel);
  CHECK(st.code() == StatusCode::kUnavailable);
  REQUIRE(events.size() == 1);
  CHECK(events[0].object.meta.name == "a");
}

TEST_CASE("over HTTP: a 410 response ends the watch with kGone and the server's message") {
  HttpFixture f;
  FakeResponse gone = Chunks({ExpiredStatusJson()});
  gone.status = 410;
  f.server.Enqueue(gone);
  CancelToken cancel;
  Status st = f.client->Watch(WidgetsRef(), {}, [](WatchEvent) {}, cancel);
  CHECK(st.code() == StatusCode::kGone);
  CHECK_THAT(st.message(), Catch::Contains("too old resource version"));
}

TEST_CASE("over HTTP: 429 carries Retry-After") {
  HttpFixture f;
  FakeResponse busy = Chunks({R"({"kind":"Status","code":429,"message":"storage is busy"})"});
  busy.status = 429;
  busy.headers = {{"Retry-After", "4"}};
  f.server.Enqueue(busy);
  auto result = f.client->List(WidgetsRef(), {});
  CHECK(result.status().code() == StatusCode::kTooManyRequests);
  CHECK(result.status().retry_after_seconds() == 4);
}

TEST_CASE("over HTTP: a merge patch arrives with its body and content type") {
  HttpFixture f;
  f.server.Enqueue(Chunks({WidgetJson("a", "8")}));
  ObjectRef ref{WidgetsRef(), "ns", "a"};
  REQUIRE(f.client->Patch(ref, PatchType::kMerge, R"({"metadata":{"labels":{"x":"y"}}})").ok());
  auto req = f.server.requests().at(0);
  CHECK(req.method == "PATCH");
  CHECK(req.target == "/apis/example.com/v1/namespaces/ns/widgets/a");
  CHECK(req.Header("content-type") == "application/merge-patch+json");
  CHECK(req.body == R"({"metadata":{"labels":{"x":"y"}}})");
}

TEST_CASE("over HTTP: cancelling a stalled watch returns promptly with kCancelled") {
  HttpFixture f;
  f.server.Enqueue(Chunks({EventLine("ADDED", WidgetJson("a", "1"))}, FakeResponse::Ending::kStall));
  CancelToken cancel;
  std::promise<void> first_event;
  std::once_flag once;
  auto watch = std::async(std::launch::async, [&] {
    return f.client->Watch(WidgetsRef(), {}, [&](WatchEvent) { std::call_once(once, [&] { first_event.set_value(); }); },
                           cancel);
  });
  // The event is delivered while the stream is still open: the body is streamed, not buffered.
  REQUIRE(first_event.get_future().wait_for(kGenerous) == std::future_status::ready);
  auto cancelled_at = std::chrono::steady_clock::now();
  cancel.Cancel();
  REQUIRE(watch.wait_for(kGenerous) == std::future_status::ready);
  CHECK(std::chrono::steady_clock::now() - cancelled_at < seconds(2));
  CHECK(watch.get().code() == StatusCode::kCancelled);
}

TEST_CASE("over HTTP: a stream silent for longer than the idle timeout ends with kTimeout") {
  HttpFixture f(/*idle_timeout_seconds=*/1);
  f.server.Enqueue(Chunks({EventLine("ADDED", WidgetJson("a", "1"))}, FakeResponse::Ending::kStall));
  CancelToken cancel;
  int events = 0;
  Status st = f.client->Watch(WidgetsRef(), {}, [&](WatchEvent) { ++events; }, cancel);
  CHECK(st.code() == StatusCode::kTimeout);
  CHECK(events == 1);
}

}  // namespace
}  // namespace nodehook
