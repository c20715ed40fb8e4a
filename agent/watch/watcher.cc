#include "agent/watch/watcher.h"

#include <random>

#include "agent/base/log.h"

namespace nodehook {

WatcherOptions TunedWatchOptions(const Config& config) {
  WatcherOptions options;
  options.watch_timeout_seconds = config.tuning.watch_timeout_seconds;
  options.metrics = &DefaultMetrics();
  return options;
}
namespace {

// A watch that ends this fast without a single event is treated like an error, so a server
// that closes every watch at once cannot spin us in a tight loop.
constexpr Duration kMinHealthyWatch{1000};

std::string FormatDelay(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

// Why a watch that did not expire ended: the labels of nodehook_watch_restarts_total.
const char* RestartCause(const Status& stream_error, const Status& watch, bool closed_at_once) {
  if (!stream_error.ok()) return "error";
  if (watch.code() == StatusCode::kTimeout) return "stall";
  if (!watch.ok() || closed_at_once) return "error";
  return "timeout";
}

uint64_t SeedOrRandom(uint64_t seed) { return seed != 0 ? seed : std::random_device{}(); }

}  // namespace

const char* WatcherStateName(Watcher::State s) {
  switch (s) {
    case Watcher::State::kEmpty: return "empty";
    case Watcher::State::kListed: return "listed";
    case Watcher::State::kWatching: return "watching";
  }
  return "unknown";
}

Watcher::Watcher(KubeClient& client, ResourceRef resource, WatchSink& sink, Clock& clock, WatcherOptions options)
    : client_(client),
      resource_(std::move(resource)),
      resource_id_(resource_.Id()),
      sink_(sink),
      clock_(clock),
      options_(options),
      backoff_(options.backoff, clock, SeedOrRandom(options.seed)),
      list_strategy_(options.list_strategy),
      rng_(SeedOrRandom(options.seed) + 1),
      metrics_(options.metrics, resource_id_) {
  last_activity_ms_.store(ToMillis(clock_.Now()));  // a scrape before Run() must not see the epoch
  metrics_.EnteredState(WatcherStateName(State::kEmpty));
  metrics_.WatchActivity([this] {
    return static_cast<double>((clock_.Now() - last_activity()).count()) / 1000.0;
  });
}

void Watcher::SetState(State s) {
  state_.store(s);
  metrics_.EnteredState(WatcherStateName(s));
}

void Watcher::MarkActivity() {
  last_activity_ms_.store(ToMillis(clock_.Now()));
  consecutive_failures_.store(0);
}

int Watcher::NextWatchTimeout(bool streaming_list) {
  int base = options_.watch_timeout_seconds;
  int timeout = std::uniform_int_distribution<int>(base, 2 * base - 1)(rng_);
  if (options_.resync_interval > Duration::zero()) {
    // End the watch when the next resync is due rather than overshooting it. A streaming list is
    // the list itself: its resync is due a whole interval from now (counted from the last list,
    // it was long overdue, and the server ended the stream after a second, before the initial
    // events of a large resource were through).
    TimePoint listed = streaming_list ? clock_.Now() : last_list_;
    auto until_resync =
        std::chrono::duration_cast<std::chrono::seconds>(listed + options_.resync_interval - clock_.Now());
    timeout = std::max<int>(1, std::min<int>(timeout, static_cast<int>(until_resync.count())));
  }
  return timeout;
}

bool Watcher::ResyncDue() const {
  return options_.resync_interval > Duration::zero() && clock_.Now() - last_list_ >= options_.resync_interval;
}

void Watcher::Run(const CancelToken& stop) {
  // Silence is measured from the start, not from the epoch.
  last_activity_ms_.store(ToMillis(clock_.Now()));
  CancelRegistration wake(stop, [this] {
    MutexLock lock(&wait_mu_);
    wait_cv_.notify_all();
  });
  while (!stop.cancelled()) {
    if (state() == State::kEmpty && list_strategy_ == ListStrategy::kStreaming) {
      WatchStep(stop, /*streaming_list=*/true);
    } else if (state() == State::kEmpty) {
      ListStep(list_strategy_);
      if (state() == State::kEmpty && !stop.cancelled()) WaitBackoff(stop, last_error_, "list");
    } else if (ResyncDue()) {
      Log(LogLevel::kInfo, "periodic resync",
          {{"resource", resource_id_}, {"resource_version", resource_version_}, {"next", "relist"}});
      SetState(State::kEmpty);
    } else {
      WatchStep(stop, /*streaming_list=*/false);
    }
  }
}

std::string Watcher::problem() const {
  MutexLock lock(&problem_mu_);
  return problem_;
}

void Watcher::SetProblem(std::string problem) {
  MutexLock lock(&problem_mu_);
  problem_ = std::move(problem);
}

void Watcher::ListStep(ListStrategy strategy) {
  auto list = ListWith(client_, resource_, strategy, options_.page_size);
  if (!list.ok()) {
    last_error_ = ListError(list.status());
    return;
  }
  std::vector<ObjectPtr> items;
  items.reserve(list->items.size());
  for (auto& item : list->items) items.push_back(std::make_shared<const KubeObject>(std::move(item)));
  list->items = {};  // the moved-from shells: freed before the sink builds its state
  Listed(items, list->quarantined, list->resource_version, strategy);
}

Status Watcher::ListError(const Status& st) {
  if (st.code() != StatusCode::kNotFound) return st;
  // A 404 on a collection: the API server does not serve this group/version/plural. That is an
  // answer, so the connection counts as alive: a CRD applied after its agents (GitOps tools
  // apply in no fixed order) is waited for, not a reason for the kubelet to restart us.
  std::string hint = "resource not found: the API server serves no " + resource_.plural + " in " +
                     (resource_.group.empty() ? "the core group" : "group " + resource_.group) + " version " +
                     resource_.version + "; is the CRD installed (check group, version and plural)?";
  SetProblem(hint);
  MarkActivity();
  if (served_) {
    served_ = false;
    metrics_.Served(false);
    Log(LogLevel::kWarn, "resource not served",
        {{"resource", resource_id_}, {"error", st.ToString()}, {"hint", hint},
         {"next", "list again with backoff; alive but not ready until it is served"}});
  }
  return NotFoundError(st.message() + "; " + hint);
}

void Watcher::Listed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined,
                     const std::string& resource_version, ListStrategy strategy) {
  SetProblem("");
  if (!served_) {
    served_ = true;
    metrics_.Served(true);
    Log(LogLevel::kInfo, "resource served", {{"resource", resource_id_}, {"next", "handle its objects"}});
  }
  Log(LogLevel::kInfo, "listed",
      {{"resource", resource_id_}, {"objects", items.size()},
       {"strategy", ListStrategyName(strategy)}, {"resource_version", resource_version}, {"next", "watch"}});
  if (synced_.load()) metrics_.Relisted();
  sink_.OnListed(items, quarantined);
  resource_version_ = resource_version;
  last_list_ = clock_.Now();
  MarkActivity();
  SetState(State::kListed);
  synced_.store(true);
}

void Watcher::StreamingListFailed(const CancelToken& stop, const Status& st, bool expired) {
  if (st.code() == StatusCode::kInvalid) {
    // Refused (a server without WatchList answers 400/422), or an answer we cannot read: the
    // paginated list is the path every server supports.
    list_strategy_ = ListStrategy::kPaginated;
    Log(LogLevel::kWarn, "streaming list refused",
        {{"resource", resource_id_}, {"error", st.ToString()}, {"next", "use paginated lists from now on"}});
    return;
  }
  Status cause = expired || st.code() == StatusCode::kGone
                     ? Status(StatusCode::kGone, "streaming list expired (410) before its initial-events-end bookmark")
                 : st.ok() ? UnavailableError("streaming list ended before its initial-events-end bookmark")
                           : ListError(st);
  // As client-go's reflector does: a paginated list now rather than a backoff and another
  // stream. A server under load fails a consistent streaming list when its watch cache does not
  // catch up within its wait (where it serves a list from etcd instead), and every agent that
  // started with it would otherwise back off and try the same again. The next relist streams.
  Log(LogLevel::kWarn, "streaming list failed",
      {{"resource", resource_id_}, {"error", cause.ToString()}, {"next", "paginated list now"}});
  ListStep(ListStrategy::kPaginated);
  if (state() == State::kEmpty && !stop.cancelled()) WaitBackoff(stop, last_error_, "list");
}

// One watch's state, shared by its event callback and what follows the watch's end.
struct Watcher::WatchRound {
  bool listing = false;  // a streaming list's initial state, until its initial-events-end bookmark
  bool expired = false;
  int events = 0;
  Status stream_error;
  std::vector<ObjectPtr> initial;
  std::vector<BadObject> initial_bad;
};

void Watcher::WatchStep(const CancelToken& stop, bool streaming_list) {
  if (!streaming_list) SetState(State::kWatching);
  WatchRound round;
  round.listing = streaming_list;
  auto on_event = [&](WatchEvent ev) { OnWatchEvent(round, std::move(ev)); };

  WatchOptions watch_options;
  watch_options.resource_version = streaming_list ? "" : resource_version_;  // "": the latest state, read consistently
  watch_options.send_initial_events = streaming_list;
  watch_options.timeout_seconds = NextWatchTimeout(streaming_list);
  TimePoint started = clock_.Now();
  Status st = client_.Watch(resource_, watch_options, on_event, stop);
  if (stop.cancelled()) return;
  if (round.listing) {
    return StreamingListFailed(stop, round.stream_error.ok() ? st : round.stream_error, round.expired);
  }
  WatchEnded(stop, round, st, started);
}

void Watcher::OnWatchEvent(WatchRound& round, WatchEvent ev) {
  ++round.events;
  if (round.listing && ev.type != WatchEventType::kError) return OnInitialEvent(round, std::move(ev));
  if (ev.type != WatchEventType::kError) MarkActivity();
  if (ev.quarantined) {
    if (!ev.object.meta.resource_version.empty()) resource_version_ = ev.object.meta.resource_version;
    sink_.OnQuarantined(*ev.quarantined, ev.type);
    return;
  }
  switch (ev.type) {
    case WatchEventType::kAdded:
    case WatchEventType::kModified:
      resource_version_ = ev.object.meta.resource_version;
      sink_.OnObject(std::make_shared<const KubeObject>(std::move(ev.object)));
      break;
    case WatchEventType::kDeleted:
      resource_version_ = ev.object.meta.resource_version;
      sink_.OnDeleted(std::make_shared<const KubeObject>(std::move(ev.object)));
      break;
    case WatchEventType::kBookmark:
      if (!ev.object.meta.resource_version.empty()) resource_version_ = ev.object.meta.resource_version;
      break;
    case WatchEventType::kError:
      if (ev.error_code == 410) {
        round.expired = true;
      } else {
        round.stream_error = Status(StatusCode::kUnavailable,
                                    "watch ERROR event " + std::to_string(ev.error_code) + ": " + ev.error_message);
      }
      break;
  }
}

void Watcher::OnInitialEvent(WatchRound& round, WatchEvent ev) {
  if (ev.type == WatchEventType::kBookmark && ev.initial_events_end) {
    round.listing = false;
    Listed(round.initial, round.initial_bad, ev.object.meta.resource_version, ListStrategy::kStreaming);
    round.initial = {};
    round.initial_bad = {};
    SetState(State::kWatching);
  } else if (ev.quarantined) {
    round.initial_bad.push_back(std::move(*ev.quarantined));
  } else if (ev.type != WatchEventType::kBookmark) {
    round.initial.push_back(std::make_shared<const KubeObject>(std::move(ev.object)));
  }
}

void Watcher::WatchEnded(const CancelToken& stop, const WatchRound& round, const Status& st, TimePoint started) {
  if (round.expired || st.code() == StatusCode::kGone) {
    metrics_.Restarted("expired");
    Log(LogLevel::kInfo, "resource version expired",
        {{"resource", resource_id_}, {"resource_version", resource_version_}, {"next", "relist"}});
    resource_version_.clear();
    SetState(State::kEmpty);
    return;
  }
  SetState(State::kListed);
  const Status& stream_error = round.stream_error;
  metrics_.Restarted(RestartCause(stream_error, st, round.events == 0 && clock_.Now() - started < kMinHealthyWatch));
  if (!stream_error.ok()) {
    WaitBackoff(stop, stream_error, "watch");
  } else if (st.code() == StatusCode::kTimeout) {
    // The server answered the watch, then sent nothing for the stall window. kube-apiserver does
    // that on a quiet resource (no bookmarks until the resource changes), and so does a broken
    // connection: reopening costs one request and tells them apart. Not a failure: the server
    // was answering, so health must not degrade on a quiet cluster.
    MarkActivity();
    Log(LogLevel::kInfo, "watch stalled",
        {{"resource", resource_id_}, {"error", st.ToString()}, {"next", "watch again now"}});
  } else if (st.code() == StatusCode::kInvalid) {
    SetState(State::kEmpty);
    WaitBackoff(stop, st, "watch");
  } else if (!st.ok()) {
    WaitBackoff(stop, st, "watch");
  } else if (round.events == 0 && clock_.Now() - started < kMinHealthyWatch) {
    WaitBackoff(stop, UnavailableError("watch closed immediately without events"), "watch");
  } else {
    Log(LogLevel::kDebug, "watch ended",
        {{"resource", resource_id_}, {"resource_version", resource_version_}, {"next", "watch again"}});
  }
}

void Watcher::WaitBackoff(const CancelToken& stop, const Status& cause, const char* during) {
  consecutive_failures_.fetch_add(1);
  Duration delay = backoff_.Next();
  Duration asked(static_cast<int64_t>(cause.retry_after_seconds()) * 1000);
  // A restarting API server tells every client the same Retry-After; waiting exactly that long
  // would bring the whole fleet back in one instant. Up to half as much again, at random.
  if (asked > delay) delay = asked + backoff_.Jitter(asked / 2);
  Log(LogLevel::kWarn, std::string(during) + " failed",
      {{"resource", resource_id_}, {"error", cause.ToString()},
       {"next", std::string(state() == State::kEmpty ? "list" : "watch") + " again in " + FormatDelay(delay)}});
  MutexLock lock(&wait_mu_);
  WaitUntil(clock_, wait_cv_, wait_mu_, clock_.Now() + delay, [&] { return stop.cancelled(); });
}

}  // namespace nodehook
