// RolloutBoard: one resource's rollout Leases as this agent last saw them (a WatchSink fed by a
// watch of the Leases labelled nodehook.io/rollout=<rid>), and when it saw each change. Its View
// is the board of board_view.h, each Lease aged by the time since this agent saw it change, on
// the local monotonic clock as client-go's leader election does: the holder's wall clock
// (renewTime) is never compared with ours.
// A Lease deleted by someone else stays on the board for a while as it was last seen: a slot
// until its lease passes from the deletion (its holder may still run: only a create takes it
// then), a node for kDeletedNodeKept (its agent writes it again within seconds; a node that left
// leaves). So a Lease deleted by hand neither lets two nodes in nor drops a node from the fleet.
// Thread-safe; borrows the clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/rollout/rules/rollout_judge.h"
#include "agent/rollout/rules/rollout_leases.h"
#include "agent/watch/watcher.h"

namespace nodehook {

// What the gate reads of a board: a seam, so tests can move the board on between two reads.
class BoardReader {
 public:
  virtual ~BoardReader() = default;
  // The board now; with this node's own knowledge laid over it by the caller.
  virtual BoardView View() const = 0;
  // The Lease of that name as last seen (kind "" when never seen).
  virtual RolloutLease Lease(const std::string& name) const = 0;
  virtual bool listed() const = 0;
  // How often the board was listed: once when its watch started, and again each time the watch
  // was away too long to resume (so changes may have come and gone unseen).
  virtual uint64_t lists() const = 0;
  // Whether the Lease of that name was deleted after this board saw it (and not written since).
  virtual bool Deleted(const std::string& name) const = 0;
  // Grows each time a node leaves the board (its deleted Lease past its time there): states that
  // waited for that node may be complete now.
  virtual uint64_t departures() const = 0;
};

class RolloutBoard final : public WatchSink, public BoardReader {
 public:
  explicit RolloutBoard(Clock& clock) : clock_(clock) {}

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override;
  void OnQuarantined(const BadObject&, WatchEventType) override {}
  void OnObject(ObjectPtr object) override;
  void OnDeleted(ObjectPtr last_state) override;

  // Called, from the watch's thread and outside the board's lock, with each slot Lease that names
  // a holder for an object state it did not name before (a grant, on a node's board). Set before
  // the watch runs.
  void SetOnSlotNamed(std::function<void(const RolloutLease& slot)> fn) { on_slot_named_ = std::move(fn); }
  // Called, the same way, after each change the watch brings (the coordinator judges again).
  void SetOnChange(std::function<void()> fn) { on_change_ = std::move(fn); }

  BoardView View() const override;
  RolloutLease Lease(const std::string& name) const override;
  bool listed() const override;
  uint64_t lists() const override;
  bool Deleted(const std::string& name) const override;
  uint64_t departures() const override;

  static constexpr Duration kDeletedNodeKept = std::chrono::minutes(1);

 private:
  struct Seen {
    RolloutLease lease;
    TimePoint changed_at;  // local: when this resourceVersion was first seen, or the deletion
    bool deleted = false;
  };
  // Returns the slot Lease when it now names a holder and object state it did not before.
  std::optional<RolloutLease> Take(const KubeObject& object) REQUIRES(mu_);
  void Tell(const std::vector<RolloutLease>& named) const;
  void Forget(Seen& seen) REQUIRES(mu_);
  static bool Expired(const Seen& seen, TimePoint now);  // deleted, and past its time on the board
  void Prune() REQUIRES(mu_);

  Clock& clock_;
  std::function<void(const RolloutLease&)> on_slot_named_;
  std::function<void()> on_change_;
  mutable Mutex mu_;
  std::map<std::string, Seen> leases_ GUARDED_BY(mu_);
  uint64_t lists_ GUARDED_BY(mu_) = 0;
  uint64_t pruned_nodes_ GUARDED_BY(mu_) = 0;  // node Leases that left the board
};

}  // namespace nodehook
