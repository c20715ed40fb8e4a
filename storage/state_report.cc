#include "storage/state_report.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace nodehook {
namespace {

constexpr size_t kMessageWidth = 60;

std::string Shorten(const std::string& text, size_t width) {
  std::string one_line = text;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  if (one_line.size() <= width) return one_line;
  return one_line.substr(0, width - 3) + "...";
}

ObjectView& ViewFor(std::map<std::string, ObjectView>& views, const std::string& uid) {
  ObjectView& view = views[uid];
  view.uid = uid;
  return view;
}

std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

using Json = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteString(Json& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void WriteTime(Json& w, const char* key, int64_t at_ms, int64_t now_ms) {
  w.Key(key);
  w.Int64(at_ms);
  WriteString(w, (std::string(key) + "_relative").c_str(), RelativeTime(at_ms, now_ms));
}

// Stored JSON documents are embedded as JSON; anything unparsable as a string.
void WriteEmbedded(Json& w, const char* key, const std::string& json) {
  w.Key(key);
  rapidjson::Document doc;
  if (doc.Parse(json.c_str(), json.size()).HasParseError()) {
    w.String(json.c_str(), static_cast<rapidjson::SizeType>(json.size()));
  } else {
    doc.Accept(w);
  }
}

void WriteObject(Json& w, const ObjectView& o, int64_t now_ms, bool with_diffbase) {
  w.StartObject();
  WriteString(w, "resource", o.resource);
  WriteString(w, "namespace", o.namespace_name);
  WriteString(w, "name", o.name);
  WriteString(w, "uid", o.uid);
  w.Key("handled");
  w.Bool(o.handled_at_ms.has_value());
  if (!o.settled_resource_version.empty()) WriteString(w, "settled_resource_version", o.settled_resource_version);
  if (o.handled_at_ms) WriteTime(w, "handled_at_ms", *o.handled_at_ms, now_ms);
  if (with_diffbase && o.diffbase) {
    WriteEmbedded(w, "essence", o.diffbase->essence);
    WriteEmbedded(w, "last_object", o.diffbase->last_object);
  }
  w.Key("handlers");
  w.StartArray();
  for (const HandlerRecord& h : o.handlers) {
    w.StartObject();
    WriteString(w, "handler", h.handler);
    WriteString(w, "outcome", h.last_outcome);
    w.Key("retries");
    w.Int(h.retries);
    if (h.last_outcome == kOutcomePermanentFailure) {
      w.Key("next_attempt_ms");
      w.Null();
      WriteString(w, "next_attempt_ms_relative", "");
    } else {
      WriteTime(w, "next_attempt_ms", h.next_attempt_ms, now_ms);
    }
    WriteTime(w, "first_start_ms", h.first_start_ms, now_ms);
    WriteString(w, "last_message", h.last_message);
    WriteString(w, "target", h.target);
    w.EndObject();
  }
  w.EndArray();
  if (o.node_steps) {
    const NodeStepsRecord& n = *o.node_steps;
    w.Key("node_steps");
    w.StartObject();
    WriteString(w, "step", n.step);
    WriteString(w, "state", n.state);
    WriteTime(w, "step_started_ms", n.step_started_ms, now_ms);
    w.Key("cordoned");
    w.Bool(n.cordoned);
    w.Key("cordoned_by_someone_else");
    w.Bool(n.was_unschedulable);
    WriteString(w, "pods_left", n.pods_left);
    w.Key("evictions");
    w.Int(n.evictions);
    WriteString(w, "boot_id", n.boot_id);
    w.Key("reboot_started");
    w.Bool(n.reboot_started);
    WriteString(w, "message", n.message);
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace

Result<std::vector<ObjectView>> CollectObjectViews(StateStore& store, bool diffbase_bodies) {
  Result<std::vector<ObjectRecord>> objects = diffbase_bodies ? store.ListAllObjects() : store.ListObjectSummaries();
  if (!objects.ok()) return objects.status();
  Result<std::vector<HandlerRecord>> handlers = store.ListAllHandlers();
  if (!handlers.ok()) return handlers.status();
  // Built in place (the agent does this for every object on a timer): one vector of the final
  // size, the handlers attached through an index by uid, no second copy of each view.
  std::vector<ObjectView> out;
  out.reserve(objects->size());
  std::unordered_map<std::string_view, size_t> index_of;  // uid -> position in `out`
  index_of.reserve(objects->size());
  for (ObjectRecord& o : *objects) {
    ObjectView& view = out.emplace_back();
    view.uid = o.uid;
    view.resource = o.resource;
    view.namespace_name = o.namespace_name;
    view.name = o.name;
    view.handled_at_ms = o.handled_at_ms;
    if (diffbase_bodies) view.diffbase = std::make_shared<const ObjectRecord>(std::move(o));
  }
  for (size_t i = 0; i < out.size(); ++i) index_of.emplace(out[i].uid, i);
  std::map<std::string, ObjectView> progress_views;
  for (HandlerRecord& h : *handlers) {
    auto it = index_of.find(h.uid);
    ObjectView* view = it != index_of.end() ? &out[it->second] : nullptr;
    if (view == nullptr) {  // identity from progress when nothing was handled yet
      view = &ViewFor(progress_views, h.uid);
      view->resource = h.resource;
      view->namespace_name = h.namespace_name;
      view->name = h.name;
    }
    view->handlers.push_back(std::move(h));
  }
  index_of.clear();  // views into `out`, which grows next
  for (auto& [uid, view] : progress_views) out.push_back(std::move(view));
  for (ObjectView& view : out) {
    std::sort(view.handlers.begin(), view.handlers.end(),
              [](const HandlerRecord& a, const HandlerRecord& b) { return a.handler < b.handler; });
  }
  std::sort(out.begin(), out.end(), [](const ObjectView& a, const ObjectView& b) {
    return std::tie(a.resource, a.namespace_name, a.name, a.uid) < std::tie(b.resource, b.namespace_name, b.name, b.uid);
  });
  return out;
}

Result<ObjectView> CollectObjectView(StateStore& store, const std::string& uid, bool diffbase_bodies) {
  Result<std::optional<ObjectRecord>> object = diffbase_bodies ? store.GetObject(uid) : store.GetObjectSummary(uid);
  if (!object.ok()) return object.status();
  Result<std::vector<HandlerRecord>> handlers = store.ListHandlers(uid);
  if (!handlers.ok()) return handlers.status();
  if (!object->has_value() && handlers->empty()) {
    return NotFoundError("node " + store.node_name() + " has no state for uid " + uid);
  }
  ObjectView view;
  view.uid = uid;
  const HandlerRecord* progress = handlers->empty() ? nullptr : &(*handlers)[0];
  view.resource = object->has_value() ? (*object)->resource : progress->resource;
  view.namespace_name = object->has_value() ? (*object)->namespace_name : progress->namespace_name;
  view.name = object->has_value() ? (*object)->name : progress->name;
  if (object->has_value()) {
    view.handled_at_ms = (*object)->handled_at_ms;
    if (diffbase_bodies) view.diffbase = std::make_shared<const ObjectRecord>(std::move(**object));
  }
  view.handlers = std::move(*handlers);
  if (!diffbase_bodies) return view;
  Result<std::optional<NodeStepsRecord>> steps = store.GetNodeSteps(uid);
  if (!steps.ok()) return steps.status();
  if (*steps) view.node_steps = std::make_shared<const NodeStepsRecord>(std::move(**steps));
  return view;
}

Result<ObjectView> FindObjectView(StateStore& store, const std::string& ref) {
  Result<ObjectView> by_uid = CollectObjectView(store, ref);
  if (by_uid.ok() || by_uid.status().code() != StatusCode::kNotFound) return by_uid;
  Result<std::vector<ObjectView>> all = CollectObjectViews(store);
  if (!all.ok()) return all.status();
  std::vector<ObjectView> named;
  for (ObjectView& view : *all) {
    if (view.Key() == ref) named.push_back(std::move(view));
  }
  if (named.size() == 1) return std::move(named.front());
  if (named.empty()) {
    return NotFoundError("node " + store.node_name() + " has no state for uid or object " + ref +
                         " (expected a uid or namespace/name; `nodehook state list` shows them)");
  }
  std::string candidates;
  for (const ObjectView& view : named) candidates += "\n  " + view.resource + " " + view.Key() + " uid " + view.uid;
  return InvalidError(ref + " names " + std::to_string(named.size()) + " objects on node " + store.node_name() +
                      "; pass one of their uids instead:" + candidates);
}

std::string NextAttemptText(const HandlerRecord& handler, int64_t now_ms) {
  return handler.last_outcome == kOutcomePermanentFailure ? "" : RelativeTime(handler.next_attempt_ms, now_ms);
}

std::string RelativeTime(int64_t at_ms, int64_t now_ms) {
  int64_t delta = at_ms - now_ms;
  int64_t seconds = std::llabs(delta) / 1000;
  if (seconds == 0) return "now";
  struct Unit {
    int64_t seconds;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  constexpr size_t kCount = sizeof kUnits / sizeof kUnits[0];
  std::string text;
  for (size_t i = 0; i < kCount; ++i) {
    if (seconds < kUnits[i].seconds) continue;
    text = std::to_string(seconds / kUnits[i].seconds) + kUnits[i].suffix;
    if (i + 1 < kCount) {  // one more, smaller unit when it is not zero: "2h 5m", "3m"
      int64_t rest = seconds % kUnits[i].seconds / kUnits[i + 1].seconds;
      if (rest > 0) text += " " + std::to_string(rest) + kUnits[i + 1].suffix;
    }
    break;
  }
  return delta > 0 ? "in " + text : text + " ago";
}

std::string FormatObjectTable(const std::vector<ObjectView>& objects, int64_t now_ms) {
  std::vector<std::vector<std::string>> rows = {
      {"RESOURCE", "OBJECT", "UID", "HANDLER", "OUTCOME", "RETRIES", "NEXT ATTEMPT", "MESSAGE"}};
  for (const ObjectView& o : objects) {
    if (o.handlers.empty()) {
      std::string when = o.handled_at_ms ? "handled " + RelativeTime(*o.handled_at_ms, now_ms) : "";
      rows.push_back({o.resource, o.Key(), o.uid, "-", "handled", "0", "-", when});
    }
    for (const HandlerRecord& h : o.handlers) {
      rows.push_back({o.resource, o.Key(), o.uid, h.handler, h.last_outcome, std::to_string(h.retries),
                      h.last_outcome == kOutcomePermanentFailure ? "-" : NextAttemptText(h, now_ms),
                      Shorten(h.last_message, kMessageWidth)});
    }
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) line += c + 1 == row.size() ? row[c] : Pad(row[c], widths[c]) + "  ";
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (objects.empty()) out += "(no objects)\n";
  return out;
}

std::string FormatObjectDetail(const ObjectView& o, int64_t now_ms) {
  std::ostringstream out;
  out << "object:    " << o.Key() << "\n"
      << "resource:  " << o.resource << "\n"
      << "uid:       " << o.uid << "\n";
  if (o.handled_at_ms) {
    out << "handled:   " << RelativeTime(*o.handled_at_ms, now_ms) << " (" << *o.handled_at_ms << " ms)\n";
    if (o.diffbase) out << "essence:   " << o.diffbase->essence << "\n";
  } else {
    out << "handled:   never (no diffbase: the next sighting runs create)\n";
  }
  if (o.handlers.empty()) out << "handlers:  none pending\n";
  for (const HandlerRecord& h : o.handlers) {
    out << "handler " << h.handler << ":\n"
        << "  outcome:       " << h.last_outcome << "\n"
        << "  retries:       " << h.retries << "\n"
        << "  next attempt:  "
        << (h.last_outcome == kOutcomePermanentFailure ? "none (gave up; `nodehook state retry` runs it once more)"
                                                       : NextAttemptText(h, now_ms))
        << "\n"
        << "  first started: " << RelativeTime(h.first_start_ms, now_ms) << "\n"
        << "  last message:  " << h.last_message << "\n";
  }
  if (o.node_steps) {
    const NodeStepsRecord& n = *o.node_steps;
    std::string pods = n.pods_left;
    for (char& c : pods) c = c == '\n' ? ' ' : c;
    out << "node steps (its rollout's, on this node):\n"
        << "  step:          " << n.step << ", since " << RelativeTime(n.step_started_ms, now_ms) << "\n"
        << "  cordon:        "
        << (n.cordoned            ? "ours (the Node carries this rollout's mark)"
            : n.was_unschedulable ? "someone else's (left as it is)"
                                  : "none held by these steps")
        << "\n";
    if (!pods.empty()) out << "  pods left:     " << pods << "\n";
    if (n.evictions > 0) out << "  evictions:     " << n.evictions << " calls\n";
    if (!n.boot_id.empty()) {
      out << "  boot ID:       " << n.boot_id
          << (n.reboot_started ? " (before the reboot; the reboot command ran)\n"
                               : " (before the reboot; the reboot command has not run yet)\n");
    }
    if (!n.message.empty()) out << "  last word:     " << n.message << "\n";
  }
  return out.str();
}

std::string ObjectsToJson(const std::vector<ObjectView>& objects, int64_t now_ms, bool with_diffbase) {
  rapidjson::StringBuffer buffer;
  Json w(buffer);
  w.StartArray();
  for (const ObjectView& o : objects) WriteObject(w, o, now_ms, with_diffbase);
  w.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string ObjectToJson(const ObjectView& object, int64_t now_ms) {
  rapidjson::StringBuffer buffer;
  Json w(buffer);
  WriteObject(w, object, now_ms, /*with_diffbase=*/true);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace nodehook
