#include "agent/kube/credentials/kubeconfig_files.h"

#include <filesystem>
#include <set>

#include "agent/base/log.h"
#include "agent/kube/credentials/file_source.h"

namespace nodehook {
namespace {

std::vector<std::string> SplitPathList(const std::string& list) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    std::string path = list.substr(start, end - start);
    if (!path.empty() && seen.insert(path).second) paths.push_back(path);
    start = end + 1;
  }
  return paths;
}

Result<std::unique_ptr<KubeconfigFile>> ParseFile(const std::string& path, const std::string& text) {
  auto file = std::make_unique<KubeconfigFile>();
  file->path = path;
  file->dir = std::filesystem::path(path).parent_path().string();
  if (file->dir.empty()) file->dir = ".";
  auto root = ParseYamlDocument(text);
  if (!root.ok()) return InvalidError(path + ": " + root.status().message());
  file->root = std::move(root).value();
  if (file->root.kind != YamlNode::Kind::kNull && !file->root.is_map()) {
    return KubeconfigError(*file, &file->root, "", "expected a mapping at the top level");
  }
  return file;
}

// Adds the entries of `list_key` ("clusters") whose names are not taken yet.
Status MergeNamed(const KubeconfigFile& file, const std::string& list_key, const std::string& inner,
                  std::map<std::string, NamedEntry>* into) {
  const YamlNode* list = file.root.Find(list_key);
  if (!list || list->kind == YamlNode::Kind::kNull) return Status::Ok();
  if (!list->is_list()) return KubeconfigError(file, list, list_key, "expected a list");
  for (const YamlNode& entry : list->items) {
    const YamlNode* name = entry.Find("name");
    if (!entry.is_map() || !name || !name->is_scalar() || name->scalar.empty()) {
      return KubeconfigError(file, &entry, list_key, "every entry needs a 'name'");
    }
    const YamlNode* body = entry.Find(inner);
    std::string where = inner + " '" + name->scalar + "'";
    if (!body || !body->is_map()) return KubeconfigError(file, body ? body : &entry, where, "expected a mapping");
    into->emplace(name->scalar, NamedEntry{body, &file});  // emplace keeps the first
  }
  return Status::Ok();
}

}  // namespace

Status KubeconfigError(const KubeconfigFile& file, const YamlNode* node, const std::string& where,
                       const std::string& what) {
  std::string text = file.path;
  if (node && node->line > 0) text += ": " + node->Where();
  if (!where.empty()) text += ": " + where;
  return InvalidError(text + ": " + what);
}

std::string MergedKubeconfig::Describe() const {
  if (files.size() == 1) return files[0]->path;
  std::string list;
  for (const auto& f : files) list += (list.empty() ? "" : ":") + f->path;
  return "the merged kubeconfig " + list;
}

Result<MergedKubeconfig> LoadKubeconfigFiles(const std::string& path_list) {
  std::vector<std::string> paths = SplitPathList(path_list);
  if (paths.empty()) return InvalidError("kubeconfig: no file named");
  MergedKubeconfig merged;
  std::vector<std::string> missing;
  for (const std::string& path : paths) {
    auto text = ReadWholeFile(path);
    if (!text.ok() && text.status().code() == StatusCode::kNotFound && paths.size() > 1) {
      missing.push_back(path);
      continue;
    }
    if (!text.ok()) return Status(text.status().code(), "kubeconfig: " + text.status().message());
    auto file = ParseFile(path, *text);
    if (!file.ok()) return InvalidError("kubeconfig " + file.status().message());
    const KubeconfigFile& f = **file;
    merged.files.push_back(std::move(file).value());
    NODEHOOK_RETURN_IF_ERROR(MergeNamed(f, "clusters", "cluster", &merged.clusters));
    NODEHOOK_RETURN_IF_ERROR(MergeNamed(f, "users", "user", &merged.users));
    NODEHOOK_RETURN_IF_ERROR(MergeNamed(f, "contexts", "context", &merged.contexts));
    const YamlNode* current = f.root.Find("current-context");
    if (current && current->kind != YamlNode::Kind::kNull && !current->is_scalar()) {
      return KubeconfigError(f, current, "current-context", "expected a string");
    }
    if (merged.current_context.empty() && current) merged.current_context = current->scalar;
  }
  if (merged.files.empty()) return NotFoundError("kubeconfig: none of " + path_list + " exists");
  for (const std::string& path : missing) {
    Log(LogLevel::kWarn, "kubeconfig file missing",
        {{"path", path}, {"list", path_list}, {"next", "merge the other files, as kubectl does"}});
  }
  return merged;
}

}  // namespace nodehook
