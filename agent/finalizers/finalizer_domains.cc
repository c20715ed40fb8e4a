#include "agent/finalizers/finalizer_domains.h"

#include <rapidjson/document.h>

#include <algorithm>

#include "agent/base/json_text.h"

namespace nodehook {
namespace {

FinalizerDomain Domain(const ResourceRef& ref, FinalizerKind kind) {
  ResourceRef plain{ref.group, ref.version, ref.plural, ref.namespace_name, ""};
  return FinalizerDomain{plain, kind};
}

}  // namespace

std::string FinalizerDomain::KindName() const { return kind == FinalizerKind::kNode ? "node" : "singleton"; }

bool FinalizerDomain::Covers(const ResourceRef& object_resource, const std::string& object_namespace) const {
  return resource.group == object_resource.group && resource.plural == object_resource.plural &&
         (resource.namespace_name.empty() || resource.namespace_name == object_namespace);
}

bool FinalizerDomain::SameAs(const FinalizerDomain& other) const {
  return kind == other.kind && resource.group == other.resource.group && resource.plural == other.resource.plural &&
         resource.namespace_name == other.resource.namespace_name;
}

std::vector<FinalizerDomain> DomainsServed(const Config& config) {
  std::vector<FinalizerDomain> out;
  for (const WatchedResource& r : config.resources) {
    if (r.finalizer) out = UnionOf(std::move(out), {Domain(r.ref, FinalizerKind::kNode)});
    if (r.singleton) out = UnionOf(std::move(out), {Domain(r.ref, FinalizerKind::kSingleton)});
  }
  return out;
}

bool StillServed(const std::vector<FinalizerDomain>& serving, FinalizerKind kind, const ResourceRef& resource,
                 const std::string& object_namespace) {
  return std::any_of(serving.begin(), serving.end(), [&](const FinalizerDomain& d) {
    return d.kind == kind && d.Covers(resource, object_namespace);
  });
}

std::vector<FinalizerDomain> RetiredDomains(const std::vector<FinalizerDomain>& recorded,
                                            const std::vector<FinalizerDomain>& serving) {
  std::vector<FinalizerDomain> out;
  for (const FinalizerDomain& d : recorded) {
    // A domain whose whole scope is still served in the same mode leaves nothing behind. One that
    // is served only in part (all namespaces narrowed to one) is swept, sparing what is served.
    bool whole = std::any_of(serving.begin(), serving.end(), [&](const FinalizerDomain& s) {
      return s.kind == d.kind && s.Covers(d.resource, d.resource.namespace_name) &&
             (s.resource.namespace_name.empty() || !d.resource.namespace_name.empty());
    });
    if (!whole) out.push_back(d);
  }
  return out;
}

std::vector<FinalizerDomain> UnionOf(std::vector<FinalizerDomain> a, const std::vector<FinalizerDomain>& b) {
  for (const FinalizerDomain& d : b) {
    bool known = std::any_of(a.begin(), a.end(), [&](const FinalizerDomain& x) { return x.SameAs(d); });
    if (!known) a.push_back(d);
  }
  return a;
}

std::string EncodeDomains(const std::vector<FinalizerDomain>& domains) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartArray();
  for (const FinalizerDomain& d : domains) {
    w.StartObject();
    PutString(w, "group", d.resource.group);
    PutString(w, "version", d.resource.version);
    PutString(w, "plural", d.resource.plural);
    PutString(w, "namespace", d.resource.namespace_name);
    PutString(w, "kind", d.KindName());
    w.EndObject();
  }
  w.EndArray();
  return buf.GetString();
}

Result<std::vector<FinalizerDomain>> DecodeDomains(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError() || !doc.IsArray()) return InvalidError("finalizer domains: expected a JSON array");
  std::vector<FinalizerDomain> out;
  for (const rapidjson::Value& item : doc.GetArray()) {
    std::string kind = StringMember(item, "kind");
    std::string plural = StringMember(item, "plural");
    std::string version = StringMember(item, "version");
    if ((kind != "node" && kind != "singleton") || plural.empty() || version.empty()) {
      return InvalidError("finalizer domains: an entry needs plural, version and kind node or singleton");
    }
    ResourceRef ref{StringMember(item, "group"), version, plural, StringMember(item, "namespace"), ""};
    out.push_back(Domain(ref, kind == "node" ? FinalizerKind::kNode : FinalizerKind::kSingleton));
  }
  return out;
}

}  // namespace nodehook
