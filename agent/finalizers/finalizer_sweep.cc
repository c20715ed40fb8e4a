#include "agent/finalizers/finalizer_sweep.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "agent/finalizers/finalizer_edit.h"
#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

constexpr int kMaxAttempts = 5;

// Removes the chosen finalizers from one object; how many were removed, or why not.
Result<int> SweepObject(KubeClient& client, const ObjectRef& ref, const ObjectMeta& meta, std::string object_json,
                        const FinalizerChoice& choose) {
  int removed = 0;
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    Result<std::vector<std::string>> current = ReadFinalizers(object_json);
    if (!current.ok()) return current.status();
    std::vector<std::string> list = *current;
    Status st = Status::Ok();
    for (const std::string& finalizer : *current) {
      if (!choose(meta, finalizer)) continue;
      st = client.Patch(ref, PatchType::kJson, RemoveFinalizerPatch(list, finalizer));
      if (!st.ok()) break;
      list.erase(std::find(list.begin(), list.end(), finalizer));
      ++removed;
    }
    if (st.ok() || st.code() == StatusCode::kNotFound) return removed;
    if (!IsConcurrentFinalizerChange(st) || attempt == kMaxAttempts) return st;
    Result<KubeObject> fresh = client.Get(ref);
    if (!fresh.ok()) return fresh.status().code() == StatusCode::kNotFound ? Result<int>(removed) : fresh.status();
    object_json = std::move(fresh->json);
  }
  return removed;
}

bool AnyChosen(const ObjectMeta& meta, const std::string& object_json, const FinalizerChoice& choose) {
  Result<std::vector<std::string>> list = ReadFinalizers(object_json);
  if (!list.ok()) return true;  // let SweepObject say what is wrong with it
  return std::any_of(list->begin(), list->end(), [&](const std::string& f) { return choose(meta, f); });
}

}  // namespace

Result<SweepCounts> SweepFinalizers(KubeClient& client, ResourceRef resource, const FinalizerChoice& choose,
                                    const SweepReport& report) {
  resource.label_selector.clear();
  resource.field_selector.clear();
  SweepCounts counts;
  auto failed = [&](const ObjectMeta& object, const char* what, const std::string& why) {
    ++counts.failures;
    if (report.failed) report.failed(object, what, why);
  };
  ListOptions options;
  do {
    Result<ObjectList> page = client.List(resource, options);
    if (!page.ok()) return page.status();
    for (const BadObject& bad : page->quarantined) failed(bad.meta, "read", bad.message);
    for (KubeObject& object : page->items) {
      ++counts.objects;
      if (!AnyChosen(object.meta, object.json, choose)) continue;
      ObjectRef ref{resource, object.meta.namespace_name, object.meta.name};
      Result<int> removed = SweepObject(client, ref, object.meta, std::move(object.json), choose);
      if (!removed.ok()) {
        failed(object.meta, "release", removed.status().message());
        continue;
      }
      if (*removed == 0) continue;
      ++counts.released_objects;
      counts.finalizers += *removed;
      if (report.released) report.released(object.meta, *removed);
    }
    options.continue_token = page->continue_token;
  } while (!options.continue_token.empty());
  return counts;
}

}  // namespace nodehook
