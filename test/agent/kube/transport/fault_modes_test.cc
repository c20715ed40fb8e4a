// Every fault mode of FakeApiServer against the real cpprest transport and RestKubeClient, and
// the in-memory list/watch the agent tests build on.
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "agent/base/log.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/credentials/file_source.h"
#include "test/agent/kube/client/kube_test_data.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_api_server.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/forwarding_kube_client.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

using std::chrono::seconds;
using Kind = FakeFault::Kind;
constexpr auto kGenerous = seconds(20);  // safety net only; never reached when things work
const std::string kWidgets = "/apis/example.com/v1/widgets";

struct Cluster {
  FakeApiServer server;
  std::unique_ptr<RestKubeClient> client;

  explicit Cluster(TransportConfig config = {}) {
    server.ServeCollection(kWidgets);
    config.server = server.url();
    client = std::make_unique<RestKubeClient>(NewCpprestTransport(config));
  }
};

TransportConfig Timeouts(int connect_seconds, int idle_seconds) {
  TransportConfig c;
  c.connect_timeout_seconds = connect_seconds;
  c.idle_timeout_seconds = idle_seconds;
  return c;
}

std::string Widget(const std::string& name, const std::string& size = "1") {
  return R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":")" + name +
         R"(","namespace":"ns","uid":"uid-)" + name + R"("},"spec":{"size":)" + size + "}}";
}

struct Recorded {
  std::mutex mu;
  std::vector<std::string> lines;  // "TYPE name" or "TYPE rv" for bookmarks, "ERROR code"
  void Add(const WatchEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (e.type == WatchEventType::kError) lines.push_back("ERROR " + std::to_string(e.error_code));
    else if (e.type == WatchEventType::kBookmark) lines.push_back("BOOKMARK " + e.object.meta.resource_version);
    else lines.push_back(std::string(WatchEventTypeName(e.type)) + " " + e.object.meta.name);
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> lock(mu);
    return lines;
  }
};

// Runs a watch on its own thread; the test changes objects meanwhile.
struct BackgroundWatch {
  Recorded events;
  CancelToken cancel;
  std::future<Status> done;
  BackgroundWatch(KubeClient& client, const std::string& rv, int timeout_seconds = 300) {
    WatchOptions o;
    o.resource_version = rv;
    o.timeout_seconds = timeout_seconds;
    done = std::async(std::launch::async, [this, &client, o] {
      return client.Watch(WidgetsRef(), o, [this](WatchEvent e) { events.Add(e); }, cancel);
    });
  }
  ~BackgroundWatch() {
    cancel.Cancel();
    if (done.valid()) done.wait();
  }
  Status Wait() { return done.wait_for(kGenerous) == std::future_status::ready ? done.get() : InternalError("hung"); }
};

TEST_CASE("fake cluster: a list pages with limit/continue and carries the resourceVersion") {
  Cluster c;
  for (const char* name : {"a", "b", "c"}) c.server.PutObject(kWidgets, Widget(name));
  auto all = ListAll(*c.client, WidgetsRef(), /*page_size=*/2);
  REQUIRE(all.ok());
  REQUIRE(all->items.size() == 3);
  CHECK(all->items[2].meta.name == "c");
  CHECK(all->resource_version == c.server.resource_version());
  CHECK(c.server.requests().size() == 2);
}

// Lets the test act between the pages of one list: `after_page` runs after every page that
// promises more.
class BetweenPages final : public ForwardingKubeClient {
 public:
  BetweenPages(KubeClient& inner, std::function<void()> after_page)
      : ForwardingKubeClient(inner), after_page_(std::move(after_page)) {}
  Result<ObjectList> List(const ResourceRef& r, const ListOptions& o) override {
    auto page = inner_.List(r, o);
    if (page.ok() && !page->continue_token.empty()) after_page_();
    return page;
  }

 private:
  std::function<void()> after_page_;
};

TEST_CASE("fake cluster: a continue token that expires mid-list falls back to one list without pages") {
  Cluster c;
  for (const char* name : {"a", "b", "c", "d", "e"}) c.server.PutObject(kWidgets, Widget(name));
  // Every continue token expires before it is used, as on a busy etcd with a list slower than
  // the compaction interval: starting over in pages would never finish.
  BetweenPages expiring(*c.client, [&] {
    c.server.PutObject(kWidgets, Widget("a", "2"));
    c.server.CompactHistory();
  });
  CapturedLog log;

  auto all = ListAll(expiring, WidgetsRef(), /*page_size=*/2);

  REQUIRE(all.ok());
  CHECK(all->items.size() == 5);  // the whole list once, not the first page twice
  CHECK(all->resource_version == c.server.resource_version());
  auto requests = c.server.requests();
  REQUIRE(requests.size() == 3);  // page 1, page 2 refused with 410, then everything at once
  CHECK_THAT(requests[1].target, Catch::Contains("continue="));
  CHECK_THAT(requests[2].target, !Catch::Contains("limit=") && !Catch::Contains("continue="));
  CHECK(log.Count("list continue token expired") == 1);
}

TEST_CASE("fake cluster: a watch replays changes after its resourceVersion, then streams live ones") {
  Cluster c;
  c.server.PutObject(kWidgets, Widget("a"));
  std::string rv = c.server.PutObject(kWidgets, Widget("b"));
  c.server.PutObject(kWidgets, Widget("a", "2"));
  BackgroundWatch w(*c.client, rv, /*timeout_seconds=*/1);
  REQUIRE(c.server.WaitForOpenWatches(1, kGenerous));
  c.server.DeleteObject(kWidgets, "ns", "b");
  c.server.PutObject(kWidgets, Widget("c"));
  CHECK(w.Wait().ok());
  CHECK(w.events.Get() == std::vector<std::string>{"MODIFIED a", "DELETED b", "ADDED c"});
}

TEST_CASE("fake cluster: a watch without a resourceVersion starts with every object as ADDED") {
  Cluster c;
  c.server.PutObject(kWidgets, Widget("a"));
  c.server.PutObject(kWidgets, Widget("b"));
  BackgroundWatch w(*c.client, "", /*timeout_seconds=*/1);
  CHECK(w.Wait().ok());
  CHECK(w.events.Get() == std::vector<std::string>{"ADDED a", "ADDED b"});
}

TEST_CASE("fake cluster: a watch ends cleanly when its server-side timeout passes") {
  Cluster c;
  std::string rv = c.server.PutObject(kWidgets, Widget("a"));
  BackgroundWatch w(*c.client, rv, /*timeout_seconds=*/1);
  REQUIRE(c.server.WaitForOpenWatches(1, kGenerous));
  c.server.PutObject(kWidgets, Widget("b"));
  c.server.SendBookmarks();
  CHECK(w.Wait().ok());
  CHECK(w.events.Get() == std::vector<std::string>{"ADDED b", "BOOKMARK " + c.server.resource_version()});
}

TEST_CASE("fault: the stream is cut in the middle of an event, and a rewatch picks the change up") {
  Cluster c;
  std::string rv = c.server.PutObject(kWidgets, Widget("a"));
  c.server.InjectFault(FakeFault::OnWatch(Kind::kCutMidEvent));
  {
    BackgroundWatch w(*c.client, rv);
    REQUIRE(c.server.WaitForOpenWatches(1, kGenerous));
    c.server.PutObject(kWidgets, Widget("a", "2"));
    Status st = w.Wait();
    CHECK(st.code() == StatusCode::kUnavailable);  // cpprest reports the broken chunk itself
    CHECK(w.events.Get().empty());
  }
  BackgroundWatch again(*c.client, rv, /*timeout_seconds=*/1);
  CHECK(again.Wait().ok());
  CHECK(again.events.Get() == std::vector<std::string>{"MODIFIED a"});
}

TEST_CASE("fault: a stall after the headers is cut by the idle timeout") {
  Cluster c(Timeouts(10, /*idle_seconds=*/1));
  c.server.InjectFault(FakeFault::OnWatch(Kind::kStallAfterHeaders));
  BackgroundWatch w(*c.client, "");
  c.server.PutObject(kWidgets, Widget("a"));  // never delivered on the stalled stream
  CHECK(w.Wait().code() == StatusCode::kTimeout);
  CHECK(w.events.Get().empty());
}

TEST_CASE("fault: a server that accepts but never answers is cut by the connect timeout") {
  Cluster c(Timeouts(/*connect_seconds=*/1, /*idle_seconds=*/60));
  c.server.InjectFault(FakeFault::OnWatch(Kind::kStallBeforeHeaders));
  auto start = std::chrono::steady_clock::now();
  BackgroundWatch w(*c.client, "");
  Status st = w.Wait();
  CHECK(st.code() == StatusCode::kUnavailable);
  CHECK_THAT(st.message(), Catch::Contains("connect timeout"));
  CHECK(std::chrono::steady_clock::now() - start < seconds(10));
}

TEST_CASE("fault: 410 arrives in-stream (injected or after compaction) and as HTTP") {
  Cluster c;
  std::string old_rv = c.server.PutObject(kWidgets, Widget("a"));
  c.server.InjectFault(FakeFault::OnWatch(Kind::kGoneInStream));
  BackgroundWatch injected(*c.client, old_rv);
  CHECK(injected.Wait().ok());
  CHECK(injected.events.Get() == std::vector<std::string>{"ERROR 410"});

  c.server.PutObject(kWidgets, Widget("b"));
  c.server.CompactHistory();
  BackgroundWatch compacted(*c.client, old_rv);
  CHECK(compacted.Wait().ok());
  CHECK(compacted.events.Get() == std::vector<std::string>{"ERROR 410"});

  c.server.InjectFault(FakeFault::Http(410, 0, FakeFault::Target::kWatch));
  BackgroundWatch http(*c.client, c.server.resource_version());
  CHECK(http.Wait().code() == StatusCode::kGone);

  ListOptions expired;
  expired.limit = 1;
  expired.continue_token = old_rv + "-1";
  CHECK(c.client->List(WidgetsRef(), expired).status().code() == StatusCode::kGone);
}

TEST_CASE("fault: 500, 503 and 429 come back retryable, with Retry-After where sent") {
  Cluster c;
  c.server.InjectFault(FakeFault::Http(500, 0, FakeFault::Target::kList));
  c.server.InjectFault(FakeFault::Http(503, 7, FakeFault::Target::kList));
  c.server.InjectFault(FakeFault::Http(429, 3, FakeFault::Target::kList));
  Status e500 = c.client->List(WidgetsRef(), {}).status();
  Status e503 = c.client->List(WidgetsRef(), {}).status();
  Status e429 = c.client->List(WidgetsRef(), {}).status();
  CHECK(e500.code() == StatusCode::kUnavailable);
  CHECK(e503.code() == StatusCode::kUnavailable);
  CHECK(e503.retry_after_seconds() == 7);
  CHECK(e429.code() == StatusCode::kTooManyRequests);
  CHECK(e429.retry_after_seconds() == 3);
  CHECK(c.client->List(WidgetsRef(), {}).ok());  // the faults are used up
}

TEST_CASE("fault: 401 until the token file changes, then the re-read token is used at once") {
  TempDir dir;
  FakeClock clock;
  std::string token_path = dir.Write("token", "old\n");
  RotatingToken token = RotatingTokenSource(token_path, "old", clock);
  TransportConfig config;
  config.bearer_token = token.current;
  config.reload_bearer_token = token.reload;
  Cluster c(config);
  c.server.RequireToken("new");
  CHECK(c.client->List(WidgetsRef(), {}).status().code() == StatusCode::kUnauthorized);
  dir.Write("token", "new\n");  // rotated; the one-minute refresh is not due
  size_t before = c.server.requests().size();
  REQUIRE(c.client->List(WidgetsRef(), {}).ok());
  auto requests = c.server.requests();
  REQUIRE(requests.size() == before + 2);  // 401 with the old token, then the retry
  CHECK(requests.back().Header("authorization") == "Bearer new");
}

TEST_CASE("fault: a garbage JSON line stops the watch with kInvalid and names the resource") {
  Cluster c;
  std::string logged;
  std::mutex mu;
  SetLogSink([&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    logged += line + "\n";
  });
  c.server.InjectFault(FakeFault::OnWatch(Kind::kGarbageLine));
  BackgroundWatch w(*c.client, c.server.resource_version());
  Status st = w.Wait();
  SetLogSink(nullptr);
  CHECK(st.code() == StatusCode::kInvalid);
  CHECK_THAT(logged, Catch::Contains("malformed watch line") && Catch::Contains("widgets.example.com/v1"));
}

TEST_CASE("fault: the server goes away, refusing connections, and comes back on the same port with its data") {
  Cluster c;
  c.server.PutObject(kWidgets, Widget("a"));
  int port = c.server.port();
  BackgroundWatch w(*c.client, c.server.resource_version());
  REQUIRE(c.server.WaitForOpenWatches(1, kGenerous));
  c.server.GoOffline();
  CHECK_FALSE(w.Wait().ok());  // the open watch ends with an error
  CHECK(c.client->List(WidgetsRef(), {}).status().code() == StatusCode::kUnavailable);
  c.server.PutObject(kWidgets, Widget("b"));  // changed while unreachable
  c.server.GoOnline();
  CHECK(c.server.port() == port);
  auto list = c.client->List(WidgetsRef(), {});
  REQUIRE(list.ok());
  CHECK(list->items.size() == 2);
}

}  // namespace
}  // namespace nodehook
