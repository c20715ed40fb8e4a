// A watch body from a hostile or broken server: framed into lines, decoded, reduced to its
// essence and diffed against the previous object, the way the watcher and reconciler do.
// Input: one byte choosing the chunk size the body arrives in, then the body. The whole body
// is also decoded as a list response.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/object/essence.h"
#include "agent/kube/client/object_json.h"
#include "agent/kube/client/watch_line_splitter.h"

namespace {

const std::vector<std::string> kIgnoredPaths = {"metadata.annotations.note", "spec.replicas"};

void Reduce(const std::string& object_json, std::string* previous_essence) {
  auto essence = nodehook::ComputeEssence(object_json, kIgnoredPaths);
  if (!essence.ok()) return;
  (void)nodehook::DiffEssences(*previous_essence, *essence);  // only must not crash
  (void)nodehook::EssenceDigest(*essence);
  *previous_essence = std::move(essence).value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = static_cast<size_t>(data[0]) + 1;
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);

  nodehook::WatchLineSplitter splitter(64 * 1024);
  std::string previous_essence;
  for (size_t at = 0; at < body.size(); at += chunk) {
    nodehook::Status fed = splitter.Feed(body.substr(at, chunk), [&](std::string_view line) {
      auto event = nodehook::ParseWatchEvent(line);
      if (event.ok()) Reduce(event->object.json, &previous_essence);
      return nodehook::Status::Ok();
    });
    if (!fed.ok()) break;
  }

  auto list = nodehook::ParseObjectList(body);
  if (list.ok()) {
    for (const nodehook::KubeObject& item : list->items) Reduce(item.json, &previous_essence);
  }
  return 0;
}
