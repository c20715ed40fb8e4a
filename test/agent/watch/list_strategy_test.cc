// Each list strategy (tuning.list_strategy) through the real client and transport against the
// fault-injecting fake server: the request it sends, the complete state it hands the sink, and
// how a streaming list that fails before its initial-events-end bookmark is handled.
#include <catch2/catch.hpp>

#include <mutex>
#include <thread>

#include "agent/watch/watcher.h"
#include "agent/kube/client/api_paths.h"
#include "agent/kube/client/rest_kube_client.h"
#include "test/agent/faults/agent_harness.h"
#include "test/fakes/fake_api_server.h"

using namespace nodehook;

namespace {

constexpr auto kGenerous = std::chrono::seconds(20);  // safety net only; never reached when things work

std::string Widget(const std::string& name) {
  return R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":")" + name +
         R"(","namespace":"ns","uid":"uid-)" + name + R"("},"spec":{"size":1}})";
}

// What the watcher hands over, and a way to wait for it.
struct Sink : WatchSink {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> log;
  void Add(std::string line) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(std::move(line));
    cv.notify_all();
  }
  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>&) override {
    std::string line = "listed";
    for (const auto& item : items) line += " " + item->meta.name;
    Add(line);
  }
  void OnQuarantined(const BadObject& bad, WatchEventType) override { Add("quarantined " + bad.meta.uid); }
  void OnObject(ObjectPtr o) override { Add("object " + o->meta.name); }
  void OnDeleted(ObjectPtr o) override { Add("deleted " + o->meta.name); }
  bool WaitFor(const std::string& line) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, kGenerous, [&] { return std::find(log.begin(), log.end(), line) != log.end(); });
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(mu);
    return log;
  }
};

struct Fixture {
  FakeApiServer server;
  std::unique_ptr<RestKubeClient> client;
  Sink sink;
  CancelToken stop;
  std::unique_ptr<Watcher> watcher;
  std::thread thread;

  Fixture() {
    server.ServeCollection(kWidgets);
    TransportConfig transport;
    transport.server = server.url();
    client = std::make_unique<RestKubeClient>(NewCpprestTransport(transport));
    server.PutObject(kWidgets, Widget("a"));
    server.PutObject(kWidgets, Widget("b"));
  }
  void Start(ListStrategy strategy, int watch_timeout_seconds = 1, Duration resync = Duration::zero()) {
    WatcherOptions o;
    o.seed = 7;
    o.list_strategy = strategy;
    o.watch_timeout_seconds = watch_timeout_seconds;
    o.resync_interval = resync;
    o.backoff.initial = Duration(20);
    o.backoff.max = Duration(50);
    watcher = std::make_unique<Watcher>(*client, ResourceRef{"example.com", "v1", "widgets", "", ""}, sink,
                                        SystemClock::Instance(), o);
    thread = std::thread([this] { watcher->Run(stop); });
  }
  ~Fixture() {
    stop.Cancel();
    if (thread.joinable()) thread.join();
  }
  // The query strings of the requests so far: lists, or watches.
  std::vector<std::string> Queries(bool watches) const {
    std::vector<std::string> out;
    for (const auto& r : server.requests()) {
      if (r.is_watch() == watches) out.push_back(r.target.substr(r.target.find('?') + 1));
    }
    return out;
  }
  size_t ListedCount() {
    size_t n = 0;
    for (const auto& line : sink.Log()) n += line.rfind("listed", 0) == 0 ? 1 : 0;
    return n;
  }
};

bool Has(const std::string& query, const std::string& param) {
  return ("&" + query + "&").find("&" + param + "&") != std::string::npos;
}

// Lists a and b, then sees c created; returns the one list request's query.
std::string ListThenWatch(Fixture& f, ListStrategy strategy) {
  f.Start(strategy);
  REQUIRE(f.sink.WaitFor("listed a b"));
  REQUIRE(f.server.WaitForOpenWatches(1, kGenerous));
  f.server.PutObject(kWidgets, Widget("c"));
  REQUIRE(f.sink.WaitFor("object c"));
  auto lists = f.Queries(false);
  REQUIRE(lists.size() == 1);
  return lists[0];
}

}  // namespace

TEST_CASE("paginated: the list reads pages from etcd, then the watch follows changes") {
  Fixture f;
  std::string list = ListThenWatch(f, ListStrategy::kPaginated);
  CHECK(Has(list, "limit=500"));
  CHECK_FALSE(Has(list, "resourceVersion=0"));
}

TEST_CASE("watch_cache: one list at resourceVersion 0, not older than it, without a limit") {
  Fixture f;
  std::string list = ListThenWatch(f, ListStrategy::kWatchCache);
  CHECK(Has(list, "resourceVersion=0"));
  CHECK(Has(list, "resourceVersionMatch=NotOlderThan"));
  CHECK(list.find("limit=") == std::string::npos);
}

TEST_CASE("streaming: the initial events up to the bookmark are the list, and the same stream goes on") {
  Fixture f;
  f.Start(ListStrategy::kStreaming);
  REQUIRE(f.sink.WaitFor("listed a b"));
  f.server.PutObject(kWidgets, Widget("c"));
  REQUIRE(f.sink.WaitFor("object c"));
  CHECK(f.Queries(false).empty());  // no list request at all
  auto watches = f.Queries(true);
  REQUIRE(watches.size() == 1);
  CHECK(Has(watches[0], "sendInitialEvents=true"));
  CHECK(Has(watches[0], "resourceVersionMatch=NotOlderThan"));
  CHECK(Has(watches[0], "allowWatchBookmarks=true"));
  // The initial ADDED events are the list, never handed over one by one as changes.
  CHECK(f.sink.Log() == std::vector<std::string>{"listed a b", "object c"});
  CHECK(f.watcher->synced());
}

TEST_CASE("streaming: the streaming list asks for a whole watch timeout, however long since the last list") {
  // With a resync interval, a watch ends when the next resync is due. A streaming list is that
  // list: asking for the time left since the last one (none yet: long overdue) gave the server
  // timeoutSeconds=1, and a large resource's initial events never got through in a second.
  Fixture f;
  f.Start(ListStrategy::kStreaming, /*watch_timeout_seconds=*/30, /*resync=*/std::chrono::hours(1));
  REQUIRE(f.sink.WaitFor("listed a b"));
  auto watches = f.Queries(true);
  REQUIRE(watches.size() == 1);
  auto at = watches[0].find("timeoutSeconds=");
  REQUIRE(at != std::string::npos);
  int timeout = std::stoi(watches[0].substr(at + std::string("timeoutSeconds=").size()));
  CHECK(timeout >= 30);
  CHECK(timeout < 60);
}

// A failed streaming list is followed at once by one paginated list, as client-go's reflector
// falls back to LIST; the watch after it is a plain one from that list's resourceVersion.
void ExpectPaginatedFallback(Fixture& f) {
  REQUIRE(f.sink.WaitFor("listed a b"));
  REQUIRE(f.server.WaitForOpenWatches(1, kGenerous));
  CHECK(f.ListedCount() == 1);  // the failed stream's events were never taken for a list
  auto lists = f.Queries(false);
  REQUIRE(lists.size() == 1);
  CHECK(Has(lists[0], "limit=500"));
  // The failed stream, then plain watches from the list (more than one when a slow machine
  // let the 1-2 s watch end already; none of them streams, since nothing expired).
  auto watches = f.Queries(true);
  REQUIRE(watches.size() >= 2);
  CHECK(Has(watches[0], "sendInitialEvents=true"));
  for (size_t i = 1; i < watches.size(); ++i) CHECK_FALSE(Has(watches[i], "sendInitialEvents=true"));
  // The stream goes on from the paginated list.
  f.server.PutObject(kWidgets, Widget("c"));
  REQUIRE(f.sink.WaitFor("object c"));
}

TEST_CASE("streaming: a stream that ends before the initial-events-end bookmark is followed by a paginated list") {
  Fixture f;
  f.server.InjectFault(FakeFault::OnWatch(FakeFault::Kind::kNoInitialEventsEnd));
  f.Start(ListStrategy::kStreaming);
  ExpectPaginatedFallback(f);
}

TEST_CASE("streaming: a 410 in the stream before the bookmark is followed by a paginated list") {
  Fixture f;
  f.server.InjectFault(FakeFault::OnWatch(FakeFault::Kind::kGoneInStream));
  f.Start(ListStrategy::kStreaming);
  ExpectPaginatedFallback(f);
}

TEST_CASE("streaming: a server error on the streaming list is followed by a paginated list; the next relist streams") {
  Fixture f;
  f.server.InjectFault(FakeFault::Http(504, 0, FakeFault::Target::kWatch));
  f.Start(ListStrategy::kStreaming);
  ExpectPaginatedFallback(f);
  // A 410 on a later watch: the relist is a streaming list again, not a paginated one.
  f.server.InjectFault(FakeFault::OnWatch(FakeFault::Kind::kGoneInStream));
  f.server.PutObject(kWidgets, Widget("d"));
  REQUIRE(f.sink.WaitFor("listed a b c d"));
  auto watches = f.Queries(true);
  // After the failed stream and the plain watches that followed the paginated list, one more
  // streaming list, and still the one paginated list.
  REQUIRE(watches.size() >= 4);
  size_t streams = 0;
  for (const auto& w : watches) streams += Has(w, "sendInitialEvents=true") ? 1 : 0;
  CHECK(streams == 2);
  CHECK(f.Queries(false).size() == 1);
}

TEST_CASE("streaming: when the paginated list fails too, the watcher backs off and streams again") {
  Fixture f;
  f.server.InjectFault(FakeFault::Http(503, 0, FakeFault::Target::kWatch));
  f.server.InjectFault(FakeFault::Http(503, 0, FakeFault::Target::kList));
  f.Start(ListStrategy::kStreaming);
  REQUIRE(f.sink.WaitFor("listed a b"));
  auto watches = f.Queries(true);
  REQUIRE(watches.size() >= 2);
  CHECK(Has(watches[0], "sendInitialEvents=true"));
  CHECK(Has(watches[1], "sendInitialEvents=true"));  // the list after the backoff streamed
  CHECK(f.Queries(false).size() == 1);               // the one paginated list, which failed
}

TEST_CASE("streaming: a 410 on a later watch relists with a new streaming list") {
  Fixture f;
  f.Start(ListStrategy::kStreaming);
  REQUIRE(f.sink.WaitFor("listed a b"));
  // The streaming list's watch ends at its 1-2 s timeout; the watch after it gets the 410.
  f.server.InjectFault(FakeFault::OnWatch(FakeFault::Kind::kGoneInStream));
  f.server.PutObject(kWidgets, Widget("c"));
  REQUIRE(f.sink.WaitFor("object c"));
  REQUIRE(f.sink.WaitFor("listed a b c"));
  auto watches = f.Queries(true);
  REQUIRE(watches.size() >= 3);
  CHECK(Has(watches[2], "sendInitialEvents=true"));
  CHECK_FALSE(Has(watches[1], "sendInitialEvents=true"));
}

TEST_CASE("streaming: a server that refuses streaming lists gets paginated lists from then on") {
  Fixture f;
  f.server.InjectFault(FakeFault::Http(400, 0, FakeFault::Target::kWatch));
  f.Start(ListStrategy::kStreaming);
  REQUIRE(f.sink.WaitFor("listed a b"));
  auto lists = f.Queries(false);
  REQUIRE(lists.size() == 1);
  CHECK(Has(lists[0], "limit=500"));
  REQUIRE(f.server.WaitForOpenWatches(1, kGenerous));
  auto watches = f.Queries(true);
  REQUIRE(watches.size() == 2);
  CHECK_FALSE(Has(watches[1], "sendInitialEvents=true"));
}

TEST_CASE("every list strategy notices an object deleted while the agent was down") {
  for (const char* strategy : {"paginated", "watch_cache", "streaming"}) {
    DYNAMIC_SECTION(strategy) {
      AgentHarness h;
      h.config.tuning.list_strategy = strategy;
      h.Put("a", 1);
      h.Put("b", 1);
      h.Start();
      REQUIRE(h.WaitForRun("a", kReasonCreate));
      REQUIRE(h.WaitForRun("b", kReasonCreate));
      h.Stop();
      h.Delete("b");
      h.Put("c", 1);
      h.Start();
      REQUIRE(h.WaitForRun("b", kReasonDelete));
      REQUIRE(h.WaitForRun("c", kReasonCreate));
      REQUIRE(h.Settle());
      CHECK(h.Runs("a", kReasonCreate) == 1);
      CHECK(h.Runs("b", kReasonDelete) == 1);
    }
  }
}
