#include "agent/kubectl/object_spec.h"

#include <cctype>

namespace nodehook {
namespace {

// "v1", "v1beta2", "v2alpha1": a Kubernetes API version.
bool LooksLikeVersion(const std::string& s) {
  if (s.size() < 2 || s[0] != 'v' || !std::isdigit(static_cast<unsigned char>(s[1]))) return false;
  size_t i = 1;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  std::string rest = s.substr(i);
  if (rest.empty()) return true;
  for (const char* stage : {"alpha", "beta"}) {
    std::string st = stage;
    if (rest.compare(0, st.size(), st) == 0) {
      std::string n = rest.substr(st.size());
      if (n.empty()) return false;
      for (char c : n) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

std::string ObjectSpec::Describe() const {
  std::string out = plural;
  if (!version.empty()) out += "." + version;
  if (!group.empty()) out += "." + group;
  out += "/" + name;
  if (!namespace_name.empty()) out += " -n " + namespace_name;
  return out;
}

Result<ObjectSpec> ParseObjectSpec(const std::string& text, const std::string& namespace_name) {
  const std::string expected = "expected RESOURCE[.GROUP]/NAME, e.g. widgets.example.com/w1";
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() ||
      text.find('/', slash + 1) != std::string::npos) {
    return InvalidError("object \"" + text + "\": " + expected);
  }
  ObjectSpec spec;
  spec.name = text.substr(slash + 1);
  spec.namespace_name = namespace_name;
  std::string resource = text.substr(0, slash);
  size_t dot = resource.find('.');
  spec.plural = resource.substr(0, dot);
  if (dot != std::string::npos) {
    std::string rest = resource.substr(dot + 1);
    size_t next = rest.find('.');
    std::string first = rest.substr(0, next);
    if (next != std::string::npos && LooksLikeVersion(first)) {
      spec.version = first;
      rest = rest.substr(next + 1);
    }
    spec.group = rest;
    spec.group_given = true;
  }
  if (spec.plural.empty() || (spec.group_given && spec.group.empty())) {
    return InvalidError("object \"" + text + "\": " + expected);
  }
  return spec;
}

bool MatchesResource(const ObjectSpec& spec, const std::string& resource_id, std::string* version) {
  size_t slash = resource_id.rfind('/');
  if (slash == std::string::npos) return false;
  std::string resource = resource_id.substr(0, slash);
  std::string id_version = resource_id.substr(slash + 1);
  size_t dot = resource.find('.');
  std::string plural = resource.substr(0, dot);
  std::string group = dot == std::string::npos ? "" : resource.substr(dot + 1);
  if (plural != spec.plural) return false;
  if (spec.group_given && group != spec.group) return false;
  if (!spec.version.empty() && id_version != spec.version) return false;
  if (version) *version = id_version;
  return true;
}

ObjectSpec ResolvedSpec(const ObjectSpec& spec, const std::string& resource_id) {
  ObjectSpec out = spec;
  size_t slash = resource_id.rfind('/');
  std::string resource = resource_id.substr(0, slash);
  size_t dot = resource.find('.');
  out.group = dot == std::string::npos ? "" : resource.substr(dot + 1);
  out.group_given = true;
  out.version = slash == std::string::npos ? "" : resource_id.substr(slash + 1);
  return out;
}

ResourceRef SpecResource(const ObjectSpec& spec, const std::string& version) {
  return ResourceRef{spec.group, version, spec.plural, spec.namespace_name, ""};
}

ObjectRef SpecObject(const ObjectSpec& spec, const std::string& version) {
  return ObjectRef{SpecResource(spec, version), spec.namespace_name, spec.name};
}

}  // namespace nodehook
