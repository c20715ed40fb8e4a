// ParseConfig and LoadConfigFile: the document's top level, "api", "tuning" and the resource list.
// Knob values are read through the knob table (knobs.h); resources through resource_parser.h.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

#include "agent/calendar/time_zone.h"
#include "agent/config/config.h"
#include "agent/config/node_outputs_parser.h"
#include "agent/config/hook_programs.h"
#include "agent/config/json_fields.h"
#include "agent/config/json_lines.h"
#include "agent/config/knobs.h"
#include "agent/config/resource_parser.h"
#include "agent/config/selector_template.h"

namespace nodehook {
namespace {

// Far more than a config needs (root, resources, a resource, hooks, a hook, argv: 6), and far
// less than what would exhaust the stack anywhere the DOM is walked.
constexpr int kMaxConfigDepth = 64;

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void ReadApi(const rapidjson::Value& api, Config* config, KnobOrigins* origins, Diagnostics& diag) {
  if (!ExpectObject(api, "api", diag)) return;
  ReportUnknownKeys(api, "api", Concat({"in_cluster"}, KnobKeysUnder("api")), diag);
  const rapidjson::Value* in_cluster = FindMember(api, "in_cluster");
  if (in_cluster != nullptr && !in_cluster->IsTrue()) {
    diag.Error("api.in_cluster",
               std::string("expected true (to connect from outside the cluster, set \"kubeconfig\" instead), got ") +
                   (in_cluster->IsFalse() ? "false" : JsonTypeName(*in_cluster)));
  }
  if (in_cluster != nullptr && FindMember(api, "kubeconfig") != nullptr) {
    diag.Error("api", "expected exactly one of: in_cluster, kubeconfig");
  }
  ReadFileKnobs(api, "api", config, origins, diag);
}

void ReadTuning(const rapidjson::Value& tuning, Config* config, KnobOrigins* origins, Diagnostics& diag) {
  if (!ExpectObject(tuning, "tuning", diag)) return;
  ReportUnknownKeys(tuning, "tuning", KnobKeysUnder("tuning"), diag);
  ReadFileKnobs(tuning, "tuning", config, origins, diag);
}

// One resource, whatever the version: a resource's versions serve the same objects.
bool SameResource(const ResourceRef& a, const ResourceRef& b) { return a.group == b.group && a.plural == b.plural; }

// Why `resource` cannot sit beside resources[j] ("" when it can). The state keeps an object's
// progress by its uid: two entries of one resource may watch two namespaces, never one object
// (in one version or two). The node keeps one snapshot state per resource, and the Node's
// outputs have one field manager per resource: one entry of a resource may have each.
std::string ClashWith(const WatchedResource& resource, const WatchedResource& other, size_t j) {
  const ResourceRef& a = resource.ref;
  const ResourceRef& b = other.ref;
  if (a.plural.empty() || !SameResource(a, b)) return "";
  const std::string there = "resources[" + std::to_string(j) + "]";
  if (a.namespace_name == b.namespace_name && a.version == b.version) {
    return "duplicates " + there + " (same group, version, plural and namespace)";
  }
  if (a.namespace_name == b.namespace_name || a.namespace_name.empty() || b.namespace_name.empty()) {
    const std::string& ns = a.namespace_name.empty() ? b.namespace_name : a.namespace_name;
    const std::string where = ns.empty() ? "in every namespace" : "in namespace \"" + ns + "\"";
    const std::string versions = a.version == b.version ? "" : " (versions " + b.version + " and " + a.version + ")";
    return "overlaps " + there + ": both would watch the " + a.plural + (a.group.empty() ? "" : "." + a.group) +
           " objects " + where + versions + "; give each entry a namespace of its own";
  }
  if (resource.hooks.count(kReasonSnapshot) && other.hooks.count(kReasonSnapshot)) {
    return "has a snapshot hook, as " + there + " of " + a.Id() +
           " does: the node keeps one snapshot per resource; keep it in one entry";
  }
  auto has_outputs = [](const WatchedResource& r) { return !r.node_condition.empty() || !r.node_output_prefixes.empty(); };
  if (has_outputs(resource) && has_outputs(other)) {
    return "has node_outputs, as " + there + " of " + a.Id() +
           " does: the Node's outputs have one field manager per resource; keep them in one entry";
  }
  return "";
}

void ReadResources(const rapidjson::Value* resources, Config* config, Diagnostics& diag) {
  const char* expected = "expected a non-empty array of resources to watch";
  if (resources == nullptr) {
    diag.Error("resources", std::string("missing (") + expected + ")");
    return;
  }
  if (!resources->IsArray() || resources->Empty()) {
    diag.Error("resources", std::string(expected) + ", got " + (resources->IsArray() ? "[]" : JsonTypeName(*resources)));
    return;
  }
  for (rapidjson::SizeType i = 0; i < resources->Size(); ++i) {
    std::string path = ElementPath("resources", i);
    WatchedResource resource;
    ReadWatchedResource((*resources)[i], path, config->zoneinfo_dir, &resource, diag);
    for (size_t j = 0; j < config->resources.size(); ++j) {
      std::string clash = ClashWith(resource, config->resources[j], j);
      if (!clash.empty()) diag.Error(path, clash);
      // Each condition has one writer: two resources would overwrite each other's verdict.
      if (!resource.node_condition.empty() && resource.node_condition == config->resources[j].node_condition) {
        diag.Error(ChildPath(ChildPath(path, "node_outputs"), "condition"),
                   "\"" + resource.node_condition + "\" is resources[" + std::to_string(j) + "]'s condition already");
      }
      // Each key has one writer too: two resources' field managers would take it from each other.
      for (size_t k = 0; k < resource.node_output_prefixes.size(); ++k) {
        for (const std::string& other : config->resources[j].node_output_prefixes) {
          if (!PrefixesOverlap(resource.node_output_prefixes[k], other)) continue;
          diag.Error(ElementPath(ChildPath(ChildPath(path, "node_outputs"), "prefixes"), k),
                     "overlaps resources[" + std::to_string(j) + "]'s prefix \"" + other + "\"");
        }
      }
    }
    config->resources.push_back(std::move(resource));
  }
}

// {node} in selectors becomes this node's name, which is only final after the overrides.
void ExpandSelectors(Config* config, Diagnostics& diag) {
  for (size_t i = 0; i < config->resources.size(); ++i) {
    ResourceRef& ref = config->resources[i].ref;
    for (auto [key, selector] : {std::pair{"label_selector", &ref.label_selector},
                                 std::pair{"field_selector", &ref.field_selector}}) {
      if (!UsesNodePlaceholder(*selector)) continue;
      if (config->node_name.empty()) {
        diag.Error(ChildPath(ElementPath("resources", i), key), "uses {node}, but node_name is not set");
        continue;
      }
      *selector = ExpandSelector(*selector, config->node_name);
    }
  }
}

void ReadDocument(const rapidjson::Value& doc, Config* config, KnobOrigins* origins, Diagnostics& diag) {
  if (!doc.IsObject()) {
    diag.Error("", std::string("expected a JSON object at the top level, got ") + JsonTypeName(doc));
    return;
  }
  ReportUnknownKeys(doc, "", Concat(KnobKeysUnder(""), {"api", "resources", "tuning"}), diag);
  ReadFileKnobs(doc, "", config, origins, diag);
  if (const rapidjson::Value* api = FindMember(doc, "api")) ReadApi(*api, config, origins, diag);
  ReadResources(FindMember(doc, "resources"), config, diag);
  if (const rapidjson::Value* tuning = FindMember(doc, "tuning")) ReadTuning(*tuning, config, origins, diag);
}

}  // namespace

ConfigResult ParseConfig(const std::string& text, const ConfigSources& sources) {
  ConfigResult result;
  // The index pass comes first: it stops at hostile nesting before the DOM is built.
  JsonLineIndex index = JsonLineIndex::Build(text, kMaxConfigDepth);
  if (const auto& deep = index.too_deep()) {
    result.errors.push_back({"", deep->line, "too deeply nested: the object or array at column " +
                                                 std::to_string(deep->column) + " is deeper than the limit of " +
                                                 std::to_string(kMaxConfigDepth) +
                                                 " levels (a nodehook config needs 6)"});
    return result;
  }
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.c_str());
  if (doc.HasParseError()) {
    TextPosition at = PositionOfOffset(text, doc.GetErrorOffset());
    result.errors.push_back({"", at.line, "syntax error at column " + std::to_string(at.column) + ": " +
                                              rapidjson::GetParseError_En(doc.GetParseError())});
    return result;  // nothing below would be trustworthy
  }
  Diagnostics diag(&index, &result.errors);
  for (const LocatedPath& dup : index.duplicate_keys()) {
    diag.ErrorAtLine(dup.path, dup.line, "duplicate key (each key may appear once per object)");
  }
  KnobOrigins origins;
  auto tzdir = sources.env.find("TZDIR");  // glibc's name for the same directory
  result.config.zoneinfo_dir = tzdir != sources.env.end() && !tzdir->second.empty() ? tzdir->second : kDefaultZoneInfoDir;
  ReadDocument(doc, &result.config, &origins, diag);
  ApplyKnobOverrides(sources, &result.config, &origins, diag);
  CheckMergedKnobs(&result.config, origins, diag);
  ExpandSelectors(&result.config, diag);
  if (sources.check_program && !result.config.skip_hook_checks) {
    CheckHookPrograms(result.config, sources.check_program, diag);
  }
  result.config.api.in_cluster = result.config.api.kubeconfig.empty();
  // File order reads best; problems outside the file (line 0) come last.
  std::stable_sort(result.errors.begin(), result.errors.end(), [](const ConfigError& a, const ConfigError& b) {
    return (a.line == 0 ? INT_MAX : a.line) < (b.line == 0 ? INT_MAX : b.line);
  });
  return result;
}

ConfigResult LoadConfigFile(const std::string& path, const ConfigSources& sources) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ConfigResult result;
    result.errors.push_back({"", 0, std::string("cannot read the file: ") + std::strerror(errno)});
    return result;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseConfig(text.str(), sources);
}

}  // namespace nodehook
