#include "agent/election/leader_election.h"

#include <thread>

#include "agent/base/log.h"
#include "agent/base/utc_time.h"

namespace nodehook {
namespace {

// client-go's JitterFactor for acquire attempts: each waits retry_period * [1, 2.2).
constexpr double kAcquireJitter = 1.2;

std::string Millis(Duration d) { return std::to_string(d.count()) + "ms"; }

}  // namespace

LeaderElector::LeaderElector(LeaseClient& lease, Clock& clock, LeaderElectionOptions options)
    : lease_(lease),
      clock_(clock),
      options_(std::move(options)),
      term_(std::make_shared<CancelToken>()),
      rng_(options_.seed != 0 ? options_.seed : std::random_device{}()) {
  term_->Cancel();  // no term before the first acquisition
}

void LeaderElector::SetOnChange(std::function<void(bool)> on_change) {
  MutexLock lock(&mu_);
  on_change_ = std::move(on_change);
}

void LeaderElector::SetOnStopBy(std::function<void(TimePoint)> on_stop_by) {
  MutexLock lock(&mu_);
  on_stop_by_ = std::move(on_stop_by);
}

void LeaderElector::SetNotes(std::function<void(LeaseRecord&)> notes) { notes_ = std::move(notes); }

void LeaderElector::Note(LeaseRecord& record) const {
  record.standbys.clear();
  record.fleet_size = 0;
  if (notes_) notes_(record);
}

std::optional<LeaseRecord> LeaderElector::Observed() const {
  MutexLock lock(&mu_);
  return observed_;
}

bool LeaderElector::IsLeader() const {
  MutexLock lock(&mu_);
  return leading_;
}

std::shared_ptr<const CancelToken> LeaderElector::TermIfMayStart() const {
  MutexLock lock(&mu_);
  // Checked against the clock, not only the flag: after a SIGSTOP the fence thread may not
  // have run yet, but the time since the last renew is already too long.
  if (!leading_ || clock_.Now() >= renewed_at_ + options_.renew_deadline) return nullptr;
  return term_;
}

void LeaderElector::Observe(const LeaseRecord& record) {
  MutexLock lock(&mu_);
  if (!observed_ || !observed_->SameAs(record)) {
    observed_ = record;
    observed_at_ = clock_.Now();
  }
}

bool LeaderElector::WaitsOutDeletedLease() {
  // A deleted Lease is no proof that its holder stopped: the holder may be in its term still (it
  // recreates the Lease at its next renew). Another agent creates it only once the last record
  // it saw of another holder is older than that record's duration, as for a Lease still held.
  MutexLock lock(&mu_);
  if (!observed_ || observed_->holder.empty() || observed_->holder == options_.identity) return false;
  Duration held_for = std::chrono::seconds(observed_->lease_duration_seconds);
  if (clock_.Now() >= observed_at_ + held_for) return false;
  Log(LogLevel::kDebug, "lease deleted while held",
      {{"lease", lease_.Describe()}, {"holder", observed_->holder},
       {"next", "create it once " + Millis(observed_at_ + held_for - clock_.Now()) + " have passed without the holder"}});
  return true;
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string wall_now = MicroTime(SystemClock::Instance().Now());
  const int duration_seconds = static_cast<int>((options_.lease_duration.count() + 999) / 1000);
  auto current = lease_.Get();
  if (!current.ok() && current.status().code() == StatusCode::kNotFound) {
    if (WaitsOutDeletedLease()) return false;
    LeaseRecord fresh{options_.identity, duration_seconds, wall_now, wall_now, 0, "", "", 0};
    Note(fresh);
    TimePoint sent = clock_.Now();
    auto created = lease_.Create(fresh);
    if (!created.ok()) {
      Log(LogLevel::kDebug, "lease not created",
          {{"lease", lease_.Describe()}, {"error", created.status().ToString()}, {"next", "try again"}});
      return false;
    }
    StartTerm(sent, *created, true);
    return true;
  }
  if (!current.ok()) {
    Log(IsLeader() ? LogLevel::kWarn : LogLevel::kDebug, "lease not read",
        {{"lease", lease_.Describe()}, {"error", current.status().ToString()},
         {"next", "try again in " + Millis(options_.retry_period)}});
    return false;
  }
  Observe(*current);
  bool mine = current->holder == options_.identity;
  {
    MutexLock lock(&mu_);
    Duration held_for = std::chrono::seconds(current->lease_duration_seconds);
    if (!mine && !current->holder.empty() && (!options_.takes_over || clock_.Now() < observed_at_ + held_for)) {
      return false;
    }
  }
  LeaseRecord next = *current;
  next.holder = options_.identity;
  next.lease_duration_seconds = duration_seconds;
  next.renew_time = wall_now;
  Note(next);
  if (!mine) {
    next.acquire_time = wall_now;
    next.transitions = current->transitions + 1;
  }
  TimePoint sent = clock_.Now();
  auto updated = lease_.Update(next);
  if (!updated.ok()) {
    bool lost_race = updated.status().code() == StatusCode::kConflict;
    Log(IsLeader() ? LogLevel::kWarn : LogLevel::kDebug, lost_race ? "lease race lost" : "lease not written",
        {{"lease", lease_.Describe()}, {"holder", current->holder}, {"error", updated.status().ToString()},
         {"next", "read it again in " + Millis(options_.retry_period)}});
    return false;
  }
  StartTerm(sent, *updated, !mine);
  return true;
}

void LeaderElector::StartTerm(TimePoint renew_sent, const LeaseRecord& stored, bool takeover) {
  std::function<void(bool)> notify;
  {
    MutexLock lock(&mu_);
    observed_ = stored;
    observed_at_ = renew_sent;
    renewed_at_ = renew_sent;
    cv_.notify_all();
    if (on_stop_by_) on_stop_by_(renewed_at_ + options_.renew_deadline);
    if (leading_) return;
    leading_ = true;
    term_ = std::make_shared<CancelToken>();
    notify = on_change_;
  }
  Log(LogLevel::kInfo, "leadership acquired",
      {{"lease", lease_.Describe()}, {"holder", options_.identity}, {"takeover", takeover},
       {"transitions", stored.transitions},
       {"next", options_.leads + "; renew every " + Millis(options_.retry_period)}});
  if (notify) notify(true);
}

void LeaderElector::EndTerm(const char* why) {
  std::function<void(bool)> notify;
  std::shared_ptr<CancelToken> term;
  {
    MutexLock lock(&mu_);
    if (!leading_) return;
    leading_ = false;
    if (on_stop_by_) on_stop_by_(TimePoint{});
    term = term_;
    notify = on_change_;
    cv_.notify_all();
  }
  // A stop asked for is no warning; any other end of a term is.
  Log(std::string_view(why) == "agent stopping" ? LogLevel::kInfo : LogLevel::kWarn, "leadership lost",
      {{"lease", lease_.Describe()}, {"holder", options_.identity}, {"reason", why},
       {"next", options_.stops + "; try to acquire again"}});
  term->Cancel();
  if (notify) notify(false);
}

TimePoint LeaderElector::EnforceRenewDeadline() {
  TimePoint deadline;
  {
    MutexLock lock(&mu_);
    if (!leading_) return TimePoint::max();
    deadline = renewed_at_ + options_.renew_deadline;
    if (clock_.Now() < deadline) return deadline;
  }
  EndTerm("no renew succeeded within the renew deadline");
  return TimePoint::max();
}

void LeaderElector::FenceLoop() {
  MutexLock lock(&mu_);
  while (!fence_done_) {
    TimePoint next;
    {
      MutexUnlock unlock(&mu_);
      next = EnforceRenewDeadline();
    }
    if (fence_done_) break;
    TimePoint renewed = renewed_at_;
    bool leading = leading_;
    WaitUntil(clock_, cv_, mu_, next, [&] {
      mu_.AssertHeld();
      return fence_done_ || renewed_at_ != renewed || leading_ != leading;
    });
  }
}

Duration LeaderElector::AcquireWait() {
  MutexLock lock(&mu_);
  double factor = std::uniform_real_distribution<double>(1.0, 1.0 + kAcquireJitter)(rng_);
  // A Lease that names no standbys yet (a leader that has just started, or an election without
  // them) is watched closely by everyone: the others slow down only once they know who stands by.
  const bool standby = !observed_ || observed_->standbys.empty() || NamedStandby(observed_->standbys, options_.identity);
  const Duration period =
      options_.acquire_period > Duration::zero() && !standby ? options_.acquire_period : options_.retry_period;
  return Duration(static_cast<int64_t>(static_cast<double>(period.count()) * factor));
}

void LeaderElector::Run(const CancelToken& stop) {
  {
    MutexLock lock(&mu_);
    fence_done_ = false;
  }
  std::thread fence([this] { FenceLoop(); });
  Mutex wait_mu;
  std::condition_variable wait_cv;
  CancelRegistration wake(stop, [&] {
    MutexLock lock(&wait_mu);
    wait_cv.notify_all();
  });
  Log(LogLevel::kInfo, "leader election started",
      {{"lease", lease_.Describe()}, {"holder", options_.identity}, {"next", "try to acquire the lease"}});
  while (!stop.cancelled()) {
    bool leading = TryAcquireOrRenew();
    Duration wait = leading ? options_.retry_period : AcquireWait();
    MutexLock lock(&wait_mu);
    WaitUntil(clock_, wait_cv, wait_mu, clock_.Now() + wait, [&] { return stop.cancelled(); });
  }
  {
    MutexLock lock(&mu_);
    fence_done_ = true;
    cv_.notify_all();
  }
  fence.join();
  EndTerm("agent stopping");
  Release();
}

void LeaderElector::Release() {
  LeaseRecord released;
  {
    MutexLock lock(&mu_);
    if (!observed_ || observed_->holder != options_.identity) return;
    released = *observed_;
  }
  released.holder.clear();
  released.lease_duration_seconds = 1;
  released.renew_time = MicroTime(SystemClock::Instance().Now());
  auto stored = lease_.Update(released);
  if (stored.ok()) {
    Log(LogLevel::kInfo, "lease released",
        {{"lease", lease_.Describe()}, {"holder", options_.identity}, {"next", "another agent may take over at once"}});
  } else {
    Log(LogLevel::kWarn, "lease released",
        {{"lease", lease_.Describe()}, {"holder", options_.identity}, {"error", stored.status().ToString()},
         {"next", "it expires after its lease duration"}});
  }
  if (stored.ok()) Observe(*stored);
}

}  // namespace nodehook
