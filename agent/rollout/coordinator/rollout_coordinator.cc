#include "agent/rollout/coordinator/rollout_coordinator.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agent/base/json_text.h"
#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/config/rollout_parser.h"
#include "agent/kube/client/lease_client.h"

namespace nodehook {
namespace {

std::string StateText(const std::string& state) { return state.substr(0, 12); }

// "namespace/name" as a request names its object ("/name" when cluster-scoped).
ObjectMeta MetaOf(const std::string& uid, const std::string& object) {
  const size_t slash = object.find('/');
  if (slash == std::string::npos) return ObjectMeta{uid, "", object, "", false};
  return ObjectMeta{uid, object.substr(0, slash), object.substr(slash + 1), "", false};
}

}  // namespace

RolloutCoordinator::RolloutCoordinator(const WatchedResource& resource, KubeClient& client, const ServerClock& server,
                                       EventRecorder& events, RolloutCoordinatorOptions options)
    : resource_(resource),
      policy_(*resource.rollout),
      rid_(RolloutIdOf(resource.ref)),
      client_(client),
      server_(server),
      events_(events),
      options_(std::move(options)) {}

int RolloutCoordinator::Round(const BoardReader& board) {
  BoardView view = board.View();
  if (options_.cordoned) view.cordoned = options_.cordoned();
  const int64_t now_ms = server_.NowMs();
  const WindowNow window = options_.windows ? options_.windows(now_ms) : WindowNow{};
  Track(view);
  NoteLapsedGrants(board, view);
  // The requests by object state, each with the nodes that asked for it.
  std::map<std::pair<std::string, std::string>, std::pair<NodeRequest, std::map<std::string, bool>>> asks;
  for (const auto& [node, requests] : view.requests) {
    for (const auto& [uid, request] : requests) {
      if (Withdrawn(board, node, uid, request.state)) continue;
      auto& ask = asks[{uid, request.state}];
      ask.first = request;
      ask.second[node] = request.started;
    }
  }
  int granted = 0;
  bool full = false;  // no place left: only nodes the rollout keeps cordoned already may enter
  for (const auto& [key, ask] : asks) {
    if (now_ms < grants_after_ms_) break;
    const Granting next = GrantFor(view, key.first, ask.first, ask.second, full, window, now_ms, &granted);
    if (next == Granting::kStop) break;
    full = full || next == Granting::kFull;
  }
  PostOutcomes(view, now_ms);
  return granted;
}

void RolloutCoordinator::Track(const BoardView& view) {
  for (const auto& [node, requests] : view.requests) {
    for (const auto& [uid, request] : requests) {
      auto [it, fresh] = tracked_.try_emplace(uid + "/" + request.state);
      if (fresh) it->second = Tracked{MetaOf(uid, request.object), request, false};
    }
  }
  // A state that no node asks for or has a result for any more (the object changed again, or is
  // gone) is forgotten.
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    const std::string& uid = it->second.object.uid;
    const std::string& state = it->second.request.state;
    bool seen = false;
    for (const auto& [node, results] : view.nodes) {
      auto r = results.find(uid);
      if (r != results.end() && r->second.state == state) seen = true;
      auto q = view.requests.find(node);
      if (q != view.requests.end()) {
        auto asked = q->second.find(uid);
        if (asked != q->second.end() && asked->second.state == state) seen = true;
      }
      if (seen) break;
    }
    it = seen ? std::next(it) : tracked_.erase(it);
  }
}

RolloutCoordinator::Granting RolloutCoordinator::GrantFor(BoardView& view, const std::string& uid,
                                                         const NodeRequest& request,
                                                         const std::map<std::string, bool>& asked, bool full,
                                                         const WindowNow& window, int64_t now_ms, int* granted) {
  const RolloutObject target{uid, request.state, false, request.resume, request.selector};
  const std::vector<std::string> canaries = Canaries(policy_, view, target);
  bool new_work_stopped = false;  // halted, outside the windows or canaries pending, for every later node
  for (const std::string& node : RolloutOrder(view, target)) {
    auto ask = asked.find(node);
    if (ask == asked.end() || (new_work_stopped && !ask->second)) continue;
    if (full && view.cordoned.count(node) == 0) continue;
    RolloutObject judged = target;
    judged.started = ask->second;  // its work started: it goes on whatever stops new work
    const RolloutAdmission a = Judge(policy_, view, judged, node, HeldOnBoard(policy_, view, node), window, now_ms);
    if (a.enter) {
      if (a.own) continue;  // its own slot for the object: the node goes on in it by itself
      if (!TakeGrantToken(now_ms)) return Granting::kStop;  // paced: the next rounds grant the rest, in order
      const bool canary = std::find(canaries.begin(), canaries.end(), node) != canaries.end();
      Status st = Grant(view, node, uid, request, a, canary);
      if (!st.ok()) {
        // Raced (409, 404): the board is behind the API server (a write of the holder, another
        // coordinator's grant); the next round judges again on what the watch brings. Refused
        // for a lasting reason: each refusal doubles the wait.
        const bool raced = st.code() == StatusCode::kConflict || st.code() == StatusCode::kNotFound;
        refusals_ = raced ? 0 : std::min(refusals_ + 1, 16);
        const int64_t wait_ms = raced ? 0 : std::min<int64_t>(int64_t{1000} << std::min(refusals_ - 1, 6), 60'000);
        grants_after_ms_ = now_ms + wait_ms;
        Log(LogLevel::kInfo, "rollout slot not granted",
            {{"resource", resource_.ref.Id()}, {"uid", uid}, {"node", node}, {"slot", a.slot},
             {"error", st.ToString()},
             {"next", raced ? "judge again at the next round" : "grant again in " + std::to_string(wait_ms / 1000) + "s"}});
        return Granting::kStop;
      }
      refusals_ = 0;
      ++*granted;
      continue;
    }
    switch (a.wait) {
      case WaitReason::kNoFreeSlot:  // for every other node and state, but those cordoned already
        full = true;
        continue;
      case WaitReason::kHalted:
      case WaitReason::kOutsideWindow:
      case WaitReason::kCanariesPending:  // for every later node of this state, but work that started
        new_work_stopped = true;
        continue;
      default: continue;  // this node only (busy, held)
    }
  }
  return full ? Granting::kFull : Granting::kGoOn;
}

Status RolloutCoordinator::Grant(BoardView& view, const std::string& node, const std::string& uid,
                                 const NodeRequest& request, const RolloutAdmission& admission, bool canary) {
  RolloutLease lease;
  lease.name = SlotLeaseName(rid_, admission.slot);
  lease.kind = "slot";
  lease.holder = node;
  lease.lease_duration_seconds = std::max(static_cast<int>(policy_.slot_lease.count()), 1);
  lease.renew_time = MicroTime(FromMillis(server_.NowMs()));
  lease.resource_version = admission.slot_version;
  lease.resource = resource_.ref.Id();
  lease.scope = resource_.ref.namespace_name;
  lease.slot = admission.slot;
  lease.uid = uid;
  lease.state = request.state;
  lease.phase = NodeStep::kRunning;
  lease.canary = canary;
  ObjectRef ref{KubeLeaseClient::LeasesResource(), options_.namespace_name, lease.name};
  const std::string body = RolloutLeaseJson(options_.namespace_name, rid_, lease);
  std::string version;
  if (admission.slot_version.empty()) {
    Status created = client_.Create(ref.resource, ref.namespace_name, body);
    if (!created.ok()) return created;
  } else {
    auto stored = client_.Replace(ref, body);
    if (!stored.ok()) return stored.status();
    version = stored->meta.resource_version;
  }
  granted_[admission.slot] = GrantMade{node, uid, request.state, version};
  // Judged on from here in this round: the watch brings the write back later.
  auto& slots = view.slots;
  slots.erase(std::remove_if(slots.begin(), slots.end(), [&](const SlotView& s) { return s.slot == admission.slot; }),
              slots.end());
  slots.push_back(SlotView{admission.slot, node, uid, request.state, NodeStep::kRunning, true, version});
  Log(LogLevel::kInfo, "rollout slot granted",
      {{"resource", resource_.ref.Id()}, {"object", request.object}, {"uid", uid}, {"node", node},
       {"slot", admission.slot}, {"state", StateText(request.state)}, {"canary", canary ? "true" : "false"},
       {"next", "the node renews the slot as its own and runs its hook"}});
  return Status::Ok();
}

void RolloutCoordinator::NoteLapsedGrants(const BoardReader& board, const BoardView& view) {
  for (auto it = granted_.begin(); it != granted_.end();) {
    GrantMade& g = it->second;
    const RolloutLease lease = board.Lease(SlotLeaseName(rid_, it->first));
    if (lease.kind.empty()) {  // the watch has not brought the grant back yet
      ++it;
      continue;
    }
    const bool same = lease.holder == g.node && lease.uid == g.uid && lease.state == g.state;
    if (same && g.version.empty()) g.version = lease.resource_version;  // a create's version, first seen
    if (!same || lease.resource_version != g.version) {  // taken (renewed, released), or granted anew
      it = granted_.erase(it);
      continue;
    }
    bool live = false;
    for (const auto& s : view.slots) live = live || (s.slot == it->first && s.live);
    if (live) {
      ++it;
      continue;
    }
    // Lapsed, never written since: its node died after asking (or is cut off). Granted again at
    // every lease, it would hold the rollout for ever.
    withdrawn_[{g.node, g.uid}] = WithdrawnAsk{g.state, board.Lease(NodeLeaseName(rid_, g.node)).resource_version};
    Log(LogLevel::kWarn, "rollout grant withdrawn",
        {{"resource", resource_.ref.Id()}, {"node", g.node}, {"uid", g.uid}, {"slot", it->first},
         {"state", StateText(g.state)},
         {"next", "grant that node nothing for the object until its node Lease changes (it asks again)"}});
    it = granted_.erase(it);
  }
  for (auto it = withdrawn_.begin(); it != withdrawn_.end();) {
    it = view.nodes.count(it->first.first) ? std::next(it) : withdrawn_.erase(it);  // the node left
  }
}

bool RolloutCoordinator::Withdrawn(const BoardReader& board, const std::string& node, const std::string& uid,
                                   const std::string& state) {
  auto it = withdrawn_.find({node, uid});
  if (it == withdrawn_.end()) return false;
  if (it->second.state == state && board.Lease(NodeLeaseName(rid_, node)).resource_version == it->second.node_version) {
    return true;
  }
  withdrawn_.erase(it);  // it asked again (its agent is back), or for another state
  return false;
}

bool RolloutCoordinator::TakeGrantToken(int64_t now_ms) {
  const double rate = std::max(policy_.max_grants_per_second, kMinGrantsPerSecond);
  if (tokens_at_ms_ < 0 || now_ms < tokens_at_ms_) {
    grant_tokens_ = std::max(rate, 1.0);  // a new coordinator (or a clock step back): a second's worth
  } else {
    grant_tokens_ = std::min(std::max(rate, 1.0), grant_tokens_ + rate * static_cast<double>(now_ms - tokens_at_ms_) / 1000.0);
  }
  tokens_at_ms_ = now_ms;
  if (grant_tokens_ < 1.0) return false;
  grant_tokens_ -= 1.0;
  return true;
}

std::string RolloutCoordinator::Handover() const {
  if (tracked_.empty()) return "";
  std::map<std::string, NodeRequest> states;
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("halted");
  w.StartArray();
  for (const auto& [key, t] : tracked_) {
    if (states.size() >= kMaxHandover) break;
    states[key] = t.request;
    if (t.halted_posted) w.String(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
  }
  w.EndArray();
  w.Key("states");
  const std::string encoded = EncodeNodeRequests(states);
  w.RawValue(encoded.c_str(), encoded.size(), rapidjson::kObjectType);
  w.EndObject();
  return buf.GetString();
}

void RolloutCoordinator::TakeOver(const std::string& handover) {
  if (handover.empty()) return;
  rapidjson::Document doc;
  doc.Parse(handover.c_str(), handover.size());
  std::map<std::string, NodeRequest> states;
  Status read = doc.IsObject() ? Status::Ok() : InvalidError("not a JSON object");
  auto encoded = read.ok() ? doc.FindMember("states") : rapidjson::Value::MemberIterator{};
  if (read.ok() && encoded != doc.MemberEnd() && encoded->value.IsObject()) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    encoded->value.Accept(w);
    read = DecodeNodeRequests(buf.GetString(), &states);
  }
  if (!read.ok()) {
    Log(LogLevel::kWarn, "rollout handover unreadable",
        {{"resource", resource_.ref.Id()}, {"error", read.ToString()},
         {"next", "report the outcomes of the states asked for from now on"}});
    return;
  }
  std::set<std::string> halted;
  auto list = doc.FindMember("halted");
  if (list != doc.MemberEnd() && list->value.IsArray()) {
    for (const auto& key : list->value.GetArray()) {
      if (key.IsString()) halted.insert(key.GetString());
    }
  }
  for (const auto& [key, request] : states) {
    const std::string uid = key.substr(0, key.find('/'));
    tracked_.try_emplace(key, Tracked{MetaOf(uid, request.object), request, halted.count(key) > 0});
  }
  Log(LogLevel::kInfo, "rollout handover taken",
      {{"resource", resource_.ref.Id()}, {"states", static_cast<int64_t>(states.size())},
       {"next", "post each state's halt or completion, once"}});
}

void RolloutCoordinator::PostOutcomes(const BoardView& view, int64_t now_ms) {
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    Tracked& t = it->second;
    const RolloutObject target{t.object.uid, t.request.state, false, t.request.resume, t.request.selector};
    std::string why;
    if (!t.halted_posted && Halted(policy_, view, target, &why)) {
      t.halted_posted = true;
      std::string note = "rollout of state " + StateText(target.state) + " halted: " + why + ";";
      for (const auto& node : FailedNodes(view, target)) {
        note += " " + node + ": " + view.nodes.at(node).at(target.uid).message + ";";
      }
      events_.RolloutReached(resource_.ref, t.object, "RolloutHalted", target.state, true, note);
      Log(LogLevel::kWarn, "rollout halted",
          {{"resource", resource_.ref.Id()}, {"object", t.request.object}, {"uid", t.object.uid},
           {"state", StateText(target.state)}, {"reason", why},
           {"next", "grant no slot for this state until it is resumed (annotation " +
                        std::string(kRolloutResumeAnnotation) + ") or the object changes"}});
    }
    if (RolloutComplete(policy_, view, target, now_ms)) {
      events_.RolloutReached(resource_.ref, t.object, "RolloutCompleted", target.state, false,
                             "rollout of state " + StateText(target.state) + " completed on every node");
      it = tracked_.erase(it);
      continue;
    }
    ++it;
  }
}

}  // namespace nodehook
