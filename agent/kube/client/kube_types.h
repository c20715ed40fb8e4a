// Plain data types exchanged with the Kubernetes API. Objects travel as their raw JSON
// plus the few metadata fields the agent routes on, so RapidJSON stays out of headers.
// Value types; not synchronized.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nodehook {

// One watched resource: group/version/plural, optionally limited to a namespace and labels.
struct ResourceRef {
  std::string group;           // "" for the core group
  std::string version;
  std::string plural;
  std::string namespace_name;  // "" = all namespaces
  std::string label_selector;  // "" = everything
  // "" = everything; e.g. "metadata.name=node-a" to watch one Node. The initializer keeps
  // five-field brace initialisations free of -Wmissing-field-initializers.
  std::string field_selector{};

  // "/apis/example.com/v1/widgets" or "/apis/example.com/v1/namespaces/ns/widgets";
  // "/api/v1/..." for the core group.
  std::string CollectionPath() const;
  // Stable identifier used in logs and the state store: "widgets.example.com/v1" ("nodes/v1" for core).
  std::string Id() const;
};

// Which stored rows belong to one watched entry. The state store keys rows by Id(), which has
// no namespace: entries of one resource in different namespaces (the config refuses overlapping
// ones) share it, and each entry owns only its own namespace's rows. Rows written under another
// version of the resource are the same objects (a config that moved to a newer version): held.
class ResourceScope {
 public:
  explicit ResourceScope(const ResourceRef& ref)
      : id_(ref.Id()), any_version_(id_.substr(0, id_.rfind('/') + 1)), namespace_name_(ref.namespace_name) {}

  // A row of this resource, in any version.
  bool SameResource(std::string_view resource_id) const {
    return resource_id.size() > any_version_.size() && resource_id.compare(0, any_version_.size(), any_version_) == 0 &&
           resource_id.find('/', any_version_.size()) == std::string_view::npos;
  }
  bool Holds(std::string_view resource_id, std::string_view namespace_name) const {
    return SameResource(resource_id) && (namespace_name_.empty() || namespace_name == namespace_name_);
  }
  const std::string& id() const { return id_; }
  const std::string& namespace_name() const { return namespace_name_; }  // "" = every namespace

 private:
  std::string id_;           // "widgets.example.com/v1"
  std::string any_version_;  // "widgets.example.com/"
  std::string namespace_name_;
};

struct ObjectMeta {
  std::string uid;
  std::string namespace_name;  // "" for cluster-scoped objects
  std::string name;
  std::string resource_version;
  bool deleting = false;  // metadata.deletionTimestamp is set

  // "ns/name", or "name" for cluster-scoped objects.
  std::string Key() const { return namespace_name.empty() ? name : namespace_name + "/" + name; }
};

struct KubeObject {
  ObjectMeta meta;
  std::string json;  // the whole object as the server sent it
};

using ObjectPtr = std::shared_ptr<const KubeObject>;

// The most an object may be before it is quarantined (BadObject). Depth counts brackets from
// the object's own top-level `{` (the API server itself refuses more than 10,000).
struct ObjectLimits {
  int max_depth = 1000;
  size_t max_bytes = size_t{4} << 20;
};

// An object that is skipped on its own, so that everything else keeps flowing: too deep, too
// big, or with unreadable metadata.
struct BadObject {
  ObjectMeta meta;      // what could be read; meta.uid is "" when not even that
  std::string reason;   // "too_deep", "too_big" or "malformed": a metric label
  std::string message;  // what is wrong, for logs and the Warning Event
};

struct ListOptions {
  int limit = 500;
  std::string continue_token;
  std::string resource_version;  // "" = most recent (quorum read)
  // "NotOlderThan" with resource_version "0": any state at least that new, served from the API
  // server's watch cache instead of etcd. "" = not sent.
  std::string resource_version_match{};
};

struct ObjectList {
  std::vector<KubeObject> items;
  std::string resource_version;  // the list's metadata.resourceVersion: where to start watching
  std::string continue_token;    // non-empty when more pages follow
  std::vector<BadObject> quarantined;  // listed objects that are not in `items`
};

struct WatchOptions {
  std::string resource_version;
  int timeout_seconds = 300;  // server-side timeoutSeconds
  bool allow_bookmarks = true;
  // A streaming list (WatchList): the server first sends the current state as ADDED events,
  // then a BOOKMARK marked initial_events_end, then changes (sendInitialEvents=true,
  // resourceVersionMatch=NotOlderThan).
  bool send_initial_events = false;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

const char* WatchEventTypeName(WatchEventType type);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  KubeObject object;  // for BOOKMARK only meta.resource_version is set
  // For ERROR: the Status object's code (410 = expired resourceVersion) and message.
  int error_code = 0;
  std::string error_message;
  // Set when the object is bad: `object` then holds only the metadata that could be read.
  std::optional<BadObject> quarantined;
  // A BOOKMARK annotated "k8s.io/initial-events-end": "true": a streaming list's initial state
  // is complete.
  bool initial_events_end = false;
};

enum class PatchType { kMerge, kJson };

struct ObjectRef {
  ResourceRef resource;
  std::string namespace_name;
  std::string name;
  // "status": Get, Replace and Patch reach the object's status subresource; "" = the object.
  std::string subresource{};
};

}  // namespace nodehook
