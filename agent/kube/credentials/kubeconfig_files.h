// Loading a kubeconfig path list (KUBECONFIG=a:b) and merging the files as kubectl does:
//  - each file is parsed on its own (YAML or JSON); any unparseable file is an error;
//  - the first file to define a cluster, user or context name wins, and its entry is taken
//    whole (later files never add fields to it);
//  - current-context comes from the first file that sets it;
//  - missing files in a list of several are skipped (with a warning), as kubectl skips them;
//    a single missing file, or a list where every file is missing, is kNotFound.
// Relative paths in an entry resolve against the directory of the file it came from.
// Pure functions over files; thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/credentials/yaml_document.h"

namespace nodehook {

struct KubeconfigFile {
  std::string path;
  std::string dir;  // relative paths in this file resolve against it
  YamlNode root;
};

// One clusters/users/contexts entry: `body` is its inner mapping ("cluster:", "user:", ...).
struct NamedEntry {
  const YamlNode* body = nullptr;
  const KubeconfigFile* file = nullptr;
};

struct MergedKubeconfig {
  std::vector<std::unique_ptr<KubeconfigFile>> files;  // owns what the entries point into
  std::string current_context;
  std::map<std::string, NamedEntry> clusters, users, contexts;

  // "a" or "a (merged from a:b)": names the source in error messages.
  std::string Describe() const;
};

// The list is split on ':'; empty and repeated entries are ignored. Errors name the file and
// the line and column of the offending key.
Result<MergedKubeconfig> LoadKubeconfigFiles(const std::string& path_list);

// "file: line L, column C: key 'k': what".
Status KubeconfigError(const KubeconfigFile& file, const YamlNode* node, const std::string& where,
                       const std::string& what);

}  // namespace nodehook
