#include "agent/election/elected_terms.h"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace nodehook {

void RunElectedTerms(LeaderElector& elector, const CancelToken& stop, const ElectedTerm& term) {
  std::mutex mu;
  std::condition_variable cv;
  bool leading = false;
  elector.SetOnChange([&](bool now) {
    {
      std::lock_guard<std::mutex> lock(mu);
      leading = now;
    }
    cv.notify_all();
  });
  CancelToken election_stop;
  std::thread election([&elector, &election_stop] { elector.Run(election_stop); });
  {
    CancelRegistration wake(stop, [&] {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    });
    auto is_leading = [&] {
      std::lock_guard<std::mutex> lock(mu);
      return leading && !stop.cancelled();
    };
    std::unique_lock<std::mutex> lock(mu);
    while (!stop.cancelled()) {
      cv.wait(lock, [&] { return leading || stop.cancelled(); });
      if (stop.cancelled()) break;
      lock.unlock();
      term(is_leading);
      lock.lock();
    }
  }
  election_stop.Cancel();
  election.join();
  elector.SetOnChange(nullptr);
}

}  // namespace nodehook
