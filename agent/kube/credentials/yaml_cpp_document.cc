// The only file that includes yaml-cpp: ParseYamlDocument over YAML::Load. Every yaml-cpp
// exception is caught here and returned with its line and column. The tree is copied out of
// yaml-cpp's node graph so nothing else sees its types; the copy is bounded in depth and size
// because yaml-cpp resolves aliases by sharing nodes (a "billion laughs" file would expand).
#include <yaml-cpp/yaml.h>

#include "agent/kube/credentials/yaml_document.h"

namespace nodehook {
namespace {

std::string At(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

class TreeCopier {
 public:
  Result<YamlNode> Copy(const YAML::Node& node, int depth) {
    YamlNode out;
    out.line = node.Mark().line + 1;
    out.column = node.Mark().column + 1;
    if (++nodes_ > kYamlMaxNodes) {
      return InvalidError(At(node.Mark()) + ": more than " + std::to_string(kYamlMaxNodes) +
                          " nodes (aliases expanding too far?)");
    }
    if (depth >= kYamlMaxDepth) {
      return InvalidError(At(node.Mark()) + ": nested deeper than " + std::to_string(kYamlMaxDepth) + " levels");
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return out;
      case YAML::NodeType::Scalar:
        out.kind = YamlNode::Kind::kScalar;
        out.scalar = node.Scalar();
        out.quoted = node.Tag() == "!";  // yaml-cpp tags quoted and block scalars "!", plain ones "?"
        return out;
      case YAML::NodeType::Sequence:
        out.kind = YamlNode::Kind::kList;
        for (const YAML::Node& item : node) {
          auto copied = Copy(item, depth + 1);
          if (!copied.ok()) return copied.status();
          out.items.push_back(std::move(copied).value());
        }
        return out;
      case YAML::NodeType::Map:
        out.kind = YamlNode::Kind::kMap;
        for (const auto& entry : node) {
          if (!entry.first.IsScalar()) return InvalidError(At(entry.first.Mark()) + ": a mapping key must be a string");
          const std::string& key = entry.first.Scalar();
          if (out.Find(key)) return InvalidError(At(entry.first.Mark()) + ": duplicate key '" + key + "'");
          auto copied = Copy(entry.second, depth + 1);
          if (!copied.ok()) return copied.status();
          out.entries.emplace_back(key, std::move(copied).value());
        }
        return out;
    }
    return out;
  }

 private:
  size_t nodes_ = 0;
};

}  // namespace

const YamlNode* YamlNode::Find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string YamlNode::Where() const {
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

Result<YamlNode> ParseYamlDocument(std::string_view text) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    return TreeCopier().Copy(root, 0);
  } catch (const YAML::Exception& e) {
    // e.what() repeats the position in yaml-cpp's own words; use the parts instead.
    return InvalidError(At(e.mark) + ": " + e.msg);
  } catch (const std::exception& e) {
    return InvalidError(std::string("YAML: ") + e.what());
  }
}

}  // namespace nodehook
