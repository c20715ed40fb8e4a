#include "agent/kubectl/finalizer_release.h"

#include <algorithm>

#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

constexpr int kMaxAttempts = 5;

// The API server answers a failed JSON-patch "test" with 422, a stale write with 409.
bool ListChanged(const Status& st) {
  return st.code() == StatusCode::kConflict ||
         (st.code() == StatusCode::kInvalid && st.message().find("HTTP 422") != std::string::npos);
}

// Removes our finalizers from one object; how many were removed, or why not.
Result<int> ReleaseObject(KubeClient& client, const ObjectRef& ref, std::string object_json) {
  int removed = 0;
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    Result<std::vector<std::string>> current = ReadFinalizers(object_json);
    if (!current.ok()) return current.status();
    std::vector<std::string> list = *current;
    Status st = Status::Ok();
    for (const std::string& finalizer : *current) {
      if (!IsNodehookFinalizer(finalizer)) continue;
      st = client.Patch(ref, PatchType::kJson, RemoveFinalizerPatch(list, finalizer));
      if (!st.ok()) break;
      list.erase(std::find(list.begin(), list.end(), finalizer));
      ++removed;
    }
    if (st.ok() || st.code() == StatusCode::kNotFound) return removed;
    if (!ListChanged(st) || attempt == kMaxAttempts) return st;
    Result<KubeObject> fresh = client.Get(ref);
    if (!fresh.ok()) return fresh.status().code() == StatusCode::kNotFound ? Result<int>(removed) : fresh.status();
    object_json = std::move(fresh->json);
  }
  return removed;
}

std::string Describe(const ResourceRef& r) { return r.Id() + (r.namespace_name.empty() ? "" : " in " + r.namespace_name); }

}  // namespace

ReleaseTotals ReleaseFinalizers(KubeClient& client, const std::vector<ResourceRef>& resources, std::ostream& out,
                                std::ostream& err) {
  ReleaseTotals totals;
  for (ResourceRef resource : resources) {
    resource.label_selector.clear();
    resource.field_selector.clear();
    ListOptions options;
    do {
      Result<ObjectList> page = client.List(resource, options);
      if (!page.ok()) {
        err << "cannot list " << Describe(resource) << ": " << page.status().message() << "\n";
        ++totals.failures;
        break;
      }
      for (const BadObject& bad : page->quarantined) {
        err << "cannot read " << resource.Id() << " " << bad.meta.Key() << ": " << bad.message << "\n";
        ++totals.failures;
      }
      for (KubeObject& object : page->items) {
        ++totals.objects;
        ObjectRef ref{resource, object.meta.namespace_name, object.meta.name};
        Result<std::vector<std::string>> before = ReadFinalizers(object.json);
        if (before.ok() && std::none_of(before->begin(), before->end(), IsNodehookFinalizer)) continue;
        Result<int> removed = ReleaseObject(client, ref, std::move(object.json));
        if (!removed.ok()) {
          err << "cannot release " << resource.Id() << " " << object.meta.Key() << ": " << removed.status().message()
              << "\n";
          ++totals.failures;
          continue;
        }
        if (*removed == 0) continue;
        ++totals.released_objects;
        totals.finalizers += *removed;
        out << "released " << *removed << " finalizer" << (*removed == 1 ? "" : "s") << " from " << resource.Id()
            << " " << object.meta.Key() << "\n";
      }
      options.continue_token = page->continue_token;
    } while (!options.continue_token.empty());
  }
  return totals;
}

}  // namespace nodehook
