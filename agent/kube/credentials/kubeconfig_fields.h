// Typed reads of kubeconfig fields from one entry (a cluster, user, context or exec section),
// with errors that name the file, the line and column, the entry and the key. Values follow
// kubectl's decoding: plain YAML scalars of any type are accepted as strings (token: 12345),
// booleans are YAML 1.1 (true/yes/on, false/no/off) and must be unquoted, null means unset.
// Value type over a parsed file; thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/credentials/kubeconfig_files.h"

namespace nodehook {

class FieldReader {
 public:
  // `where` names the entry in messages, e.g. "cluster 'prod'".
  FieldReader(const KubeconfigFile& file, const YamlNode& map, std::string where)
      : file_(file), map_(map), where_(std::move(where)) {}

  const YamlNode* Find(const std::string& key) const { return map_.Find(key); }
  Status Error(const std::string& key, const std::string& what) const;

  // Absent or null leaves *out unchanged.
  Status String(const std::string& key, std::string* out) const;
  Status Bool(const std::string& key, bool* out) const;
  Status StringList(const std::string& key, std::vector<std::string>* out) const;
  // A list of {name, value} mappings (exec env).
  Status NameValueList(const std::string& key, std::vector<std::pair<std::string, std::string>>* out) const;

  // PEM from `<file_key>-data` (base64; wins when both are set) or from the file `<file_key>`,
  // resolved against the kubeconfig's directory; that path goes to *from_file when given.
  Status Pem(const std::string& file_key, std::string* out, std::string* from_file = nullptr) const;

  // A path from the kubeconfig, made absolute against the kubeconfig's directory.
  std::string Resolve(const std::string& path) const;
  const KubeconfigFile& file() const { return file_; }
  const std::string& where() const { return where_; }

 private:
  const KubeconfigFile& file_;
  const YamlNode& map_;
  std::string where_;
};

// A YAML subtree as JSON (exec plugin cluster config): plain scalars that read as YAML 1.1
// numbers, booleans or null keep that type, everything else is a string.
std::string YamlToJson(const YamlNode& node);

}  // namespace nodehook
