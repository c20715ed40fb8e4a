#include "agent/election/elected_terms.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "agent/base/mutex.h"

namespace nodehook {

void RunElectedTerms(LeaderElector& elector, const CancelToken& stop, const ElectedTerm& term) {
  Mutex mu;
  std::condition_variable cv;
  bool leading = false;
  elector.SetOnChange([&](bool now) {
    {
      MutexLock lock(&mu);
      leading = now;
    }
    cv.notify_all();
  });
  CancelToken election_stop;
  std::thread election([&elector, &election_stop] { elector.Run(election_stop); });
  {
    CancelRegistration wake(stop, [&] {
      MutexLock lock(&mu);
      cv.notify_all();
    });
    auto is_leading = [&] {
      MutexLock lock(&mu);
      return leading && !stop.cancelled();
    };
    MutexLock lock(&mu);
    while (!stop.cancelled()) {
      mu.Wait(cv, [&] { return leading || stop.cancelled(); });
      if (stop.cancelled()) break;
      MutexUnlock unlock(&mu);
      term(is_leading);
    }
  }
  election_stop.Cancel();
  election.join();
  elector.SetOnChange(nullptr);
}

}  // namespace nodehook
