#include "agent/config/config_schema.h"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <climits>
#include <stdexcept>

#include "agent/config/knobs.h"
#include "agent/config/resource_parser.h"
#include "agent/config/node_outputs_parser.h"
#include "agent/config/node_steps_parser.h"
#include "agent/config/rollout_parser.h"

namespace nodehook {
namespace {

constexpr const char* kConditionTypePattern =
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z][A-Za-z0-9]{0,62}$";

using rapidjson::Value;

// A dotted path such as "metadata.annotations.note": no empty part.
constexpr const char* kDottedPathPattern = "^[^.]+(\\.[^.]+)*$";
// A label key: an optional DNS prefix and "/", then a name (the parser also refuses ".." in the prefix).
constexpr const char* kLabelKeyPattern =
    "^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";

class SchemaBuilder {
 public:
  explicit SchemaBuilder(rapidjson::Document::AllocatorType& a) : a_(a) {}

  Value Str(const std::string& s) { return Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a_); }

  Value Object(const char* type, const std::string& description = "") {
    Value v(rapidjson::kObjectType);
    if (type != nullptr) Set(v, "type", Str(type));
    if (!description.empty()) Set(v, "description", Str(description));
    return v;
  }

  void Set(Value& object, const char* key, Value value) { object.AddMember(Str(key), value, a_); }

  Value Integer(int min, int max, const std::string& description) {
    Value v = Object("integer", description);
    Set(v, "minimum", Value(min));
    Set(v, "maximum", Value(max));
    return v;
  }

  Value Strings(const std::vector<std::string>& items) {
    Value list(rapidjson::kArrayType);
    for (const std::string& item : items) list.PushBack(Str(item), a_);
    return list;
  }

  // A closed object: only `properties`, with `required` ones.
  Value Closed(const std::string& description, Value properties, const std::vector<std::string>& required = {}) {
    Value v = Object("object", description);
    Set(v, "properties", std::move(properties));
    if (!required.empty()) Set(v, "required", Strings(required));
    Set(v, "additionalProperties", Value(false));
    return v;
  }

  Value Knob(const KnobBinding& knob) {
    const std::string& help = knob.info.help;
    Value v;
    switch (knob.type) {
      case KnobType::kInteger:
        v = Integer(knob.min_value, knob.max_value, help);
        Set(v, "default", Value(std::stoi(knob.info.default_value)));
        break;
      case KnobType::kBool:
        v = Object("boolean", help);
        Set(v, "default", Value(knob.info.default_value == "true"));
        break;
      case KnobType::kText:
        v = Object("string", help);
        if (!knob.allowed.empty()) Set(v, "enum", Strings(knob.allowed));
        if (knob.non_empty) Set(v, "minLength", Value(1));
        if (!knob.info.default_value.empty()) Set(v, "default", Str(knob.info.default_value));
        break;
    }
    return v;
  }

  // The knobs stored directly under `section` ("" = the top level).
  void AddKnobs(Value& properties, const std::string& section) {
    for (const KnobBinding& knob : KnobBindings()) {
      const std::string& key = knob.info.file_key;
      size_t dot = key.rfind('.');
      std::string parent = dot == std::string::npos ? "" : key.substr(0, dot);
      if (parent == section) Set(properties, knob.info.name.c_str(), Knob(knob));
    }
  }

  Value Hook(const std::string& reason) {
    Value props(rapidjson::kObjectType);
    Value argv = Object("array", "the hook's program (an absolute path) and its arguments");
    Set(argv, "minItems", Value(1));
    Value first = Object("string");
    Set(first, "pattern", Str("^/"));
    Value firsts(rapidjson::kArrayType);
    firsts.PushBack(first, a_);
    Set(argv, "items", std::move(firsts));
    Value rest = Object("string");
    Set(rest, "minLength", Value(1));
    Set(argv, "additionalItems", std::move(rest));
    Set(props, "argv", std::move(argv));
    Set(props, "timeout_seconds", Integer(1, kMaxHookTimeoutSeconds, "seconds before the hook is stopped"));
    Set(props, "max_retries", Integer(1, kMaxHookRetries, "failures before giving up (overrides tuning.retry_limit)"));
    Set(props, "max_total_seconds",
        Integer(1, kMaxHookTotalSeconds, "give up this long after the first attempt (overrides tuning.retry_total_seconds)"));
    std::vector<std::string> required = {"argv"};
    if (reason == kReasonCheck) {
      Set(props, "interval_seconds", Integer(1, kMaxCheckIntervalSeconds, "seconds between two checks of an object"));
      Set(props, "jitter_percent", Integer(0, kMaxCheckJitterPercent, "+- this share of each interval, at random"));
      required.emplace_back("interval_seconds");
    }
    if (reason == kReasonSnapshot) {
      Set(props, "run_on_start", Object("boolean", "run once after the first list even when nothing changed"));
    }
    for (const std::string& key : HookKeys(reason)) {
      if (!props.HasMember(key.c_str())) throw std::logic_error("config schema misses hook key " + key);
    }
    return Closed("the " + reason + " hook", std::move(props), required);
  }

  Value Hooks() {
    Value props(rapidjson::kObjectType);
    for (const std::string& reason : HookReasons()) Set(props, reason.c_str(), Hook(reason));
    Value hooks = Closed("the hooks to run, by reason", std::move(props));
    Set(hooks, "minProperties", Value(1));
    return hooks;
  }

  Value DottedPath(const std::string& description) {
    Value v = Object("string", description);
    Set(v, "pattern", Str(kDottedPathPattern));
    return v;
  }

  // A singleton resource takes no per-node options.
  Value SingletonRule() {
    Value when = Object(nullptr);
    Value when_props(rapidjson::kObjectType);
    Value is_true(rapidjson::kObjectType);
    Set(is_true, "const", Value(true));
    Set(when_props, "singleton", std::move(is_true));
    Set(when, "properties", std::move(when_props));
    Set(when, "required", Strings({"singleton"}));
    Value then = Object(nullptr, "a singleton resource cannot use finalizer, node_selector_path, rollout, node_outputs, ready_condition, "
                                 "resume or event");
    Value then_props(rapidjson::kObjectType);
    Value is_false(rapidjson::kObjectType);
    Set(is_false, "const", Value(false));
    Set(then_props, "finalizer", std::move(is_false));
    Set(then_props, "node_selector_path", Value(false));
    Set(then_props, "rollout", Value(false));
    Set(then_props, "node_outputs", Value(false));
    Set(then_props, "ready_condition", Value(false));
    Value hook_props(rapidjson::kObjectType);
    Set(hook_props, kReasonResume, Value(false));
    Set(hook_props, kReasonEvent, Value(false));
    Value hooks(rapidjson::kObjectType);
    Set(hooks, "properties", std::move(hook_props));
    Set(then_props, "hooks", std::move(hooks));
    Set(then, "properties", std::move(then_props));
    Value rule(rapidjson::kObjectType);
    Set(rule, "if", std::move(when));
    Set(rule, "then", std::move(then));
    return rule;
  }

  // 2 or "10%".
  Value NodeCount(const std::string& description) {
    Value v = Object(nullptr, description);
    Value choices(rapidjson::kArrayType);
    choices.PushBack(Integer(1, kMaxRolloutNodes, "a number of nodes"), a_);
    Value percent = Object("string", "a percentage of the nodes that handle the resource, rounded up");
    Set(percent, "pattern", Str(kNodePercentPattern));
    choices.PushBack(percent, a_);
    Set(v, "oneOf", std::move(choices));
    return v;
  }

  Value Window() {
    Value props(rapidjson::kObjectType);
    Value cron = Object("string", "5-field cron expression of the window's starts, e.g. \"0 22 * * 1-5\"");
    Set(cron, "minLength", Value(1));
    Set(props, "cron", std::move(cron));
    Set(props, "duration_seconds",
        Integer(kMinWindowSeconds, kMaxWindowSeconds, "how long each start keeps the window open"));
    Value zone = Object("string", "IANA time zone of the cron expression, e.g. Europe/Berlin");
    Set(zone, "minLength", Value(1));
    Set(zone, "default", Str("UTC"));
    Set(props, "time_zone", std::move(zone));
    return Closed("a maintenance window: gated work starts only inside one", std::move(props),
                  {"cron", "duration_seconds"});
  }

  Value Rollout() {
    Value props(rapidjson::kObjectType);
    Set(props, "max_nodes", NodeCount("at most this many nodes inside the gate at once (default 1)"));
    Set(props, "canary_nodes", Integer(0, kMaxRolloutNodes, "nodes that go first for each new object state"));
    Set(props, "soak_seconds", Integer(0, kMaxSoakSeconds, "a node keeps its place this long after success"));
    Set(props, "verify", Hook("verify"));
    Set(props, "max_failed_nodes", NodeCount("failed nodes that halt an object state's rollout (default 1)"));
    Set(props, "failure_after_retries",
        Integer(1, kMaxHookRetries, "failed attempts after which a node counts as failed (default 3)"));
    Value reasons = Object("array", "the reasons gated (default create and update); each needs its hook");
    Value reason = Object("string");
    Set(reason, "enum", Strings(RolloutReasons()));
    Set(reasons, "items", std::move(reason));
    Set(reasons, "minItems", Value(1));
    Set(reasons, "uniqueItems", Value(true));
    Set(props, "reasons", std::move(reasons));
    Value windows = Object("array", "maintenance windows; none = always open");
    Set(windows, "items", Window());
    Set(props, "windows", std::move(windows));
    Value hold = Object("string", "a Node label that holds gated work on that node");
    Set(hold, "pattern", Str(kLabelKeyPattern));
    Set(props, "hold_label", std::move(hold));
    Set(props, "slot_lease_seconds", Integer(kMinSlotLeaseSeconds, kMaxSlotLeaseSeconds,
                                             "a slot holder renews within this, or loses the slot (default 15)"));
    Value grants = Object("number", "slots the coordinator grants a second at most, whatever the fleet's size "
                                    "(default 20): bounds the API server's work for the rollout");
    Set(grants, "minimum", Value(kMinGrantsPerSecond));
    Set(grants, "maximum", Value(kMaxGrantsPerSecond));
    Set(props, "max_grants_per_second", std::move(grants));
    Set(props, "cordon", Object("boolean", "cordon the node before the gated hook, uncordon it after"));
    Value drain_props(rapidjson::kObjectType);
    Set(drain_props, "timeout_seconds", Integer(kMinDrainSeconds, kMaxDrainSeconds,
                                                "not drained by then: the node fails the object state (default 600)"));
    Value selector = Object("string", "a label selector: only these pods are evicted");
    Set(selector, "minLength", Value(1));
    Set(drain_props, "pod_selector", std::move(selector));
    Set(drain_props, "grace_period_seconds",
        Integer(1, kMaxGracePeriodSeconds, "each eviction's grace period (default: each pod's own)"));
    Set(drain_props, "force", Object("boolean", "also evict pods that declare no controller, as kubectl drain --force"));
    Set(drain_props, "delete_emptydir_data",
        Object("boolean", "also evict pods with emptyDir volumes, as kubectl drain --delete-emptydir-data"));
    Value drain_object = Closed("evict the node's pods through the Eviction API before the gated hook (implies cordon)",
                                std::move(drain_props));
    Value drain(rapidjson::kObjectType);
    Value drain_forms(rapidjson::kArrayType);
    drain_forms.PushBack(Object("boolean"), a_);
    drain_forms.PushBack(std::move(drain_object), a_);
    Set(drain, "anyOf", std::move(drain_forms));
    Set(props, "drain", std::move(drain));
    Value reboot_props(rapidjson::kObjectType);
    Value reboot_argv = Hook("reboot");
    Set(reboot_props, "argv", Value(reboot_argv["properties"]["argv"], a_));
    Set(reboot_props, "timeout_seconds", Integer(kMinRebootSeconds, kMaxRebootSeconds,
                                                 "no new boot ID by then: the node fails the object state (default 900)"));
    Set(props, "reboot", Closed("how to reboot the node when the hook's result file says {\"reboot\": true}",
                                std::move(reboot_props), {"argv"}));
    Value on_failure = Object("string", "a node that fails: left cordoned for a person (default), or uncordoned");
    Set(on_failure, "enum", Strings(OnFailureNames()));
    Set(props, "on_failure", std::move(on_failure));
    for (const std::string& key : RolloutKeys()) {
      if (!props.HasMember(key.c_str())) throw std::logic_error("config schema misses rollout key " + key);
    }
    return Closed("fleet rollout: at most max_nodes nodes at a time, canaries first", std::move(props));
  }

  Value NodeOutputs() {
    Value props(rapidjson::kObjectType);
    Value condition = Object("string", "the type of the NodeCondition kept on this node from its objects' states "
                                       "(True: all handled, False: failing, Unknown: in progress), e.g. WidgetsReady");
    Set(condition, "pattern", Str(kConditionTypePattern));
    Value reserved(rapidjson::kObjectType);
    Set(reserved, "enum", Strings(ReservedNodeConditionTypes()));
    Set(condition, "not", std::move(reserved));
    Set(props, "condition", std::move(condition));
    Value prefixes = Object("array", "key prefixes under which hooks may publish node labels, annotations, conditions "
                                     "and taints (\"node\" in the result file), e.g. widgets.example.com/");
    Value prefix = Object("string", "a DNS subdomain (not kubernetes.io or k8s.io) and \"/\", optionally followed "
                                    "by the start of a name");
    Set(prefix, "pattern", Str("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?$"));
    Set(prefixes, "items", std::move(prefix));
    Set(prefixes, "minItems", Value(1));
    Set(prefixes, "uniqueItems", Value(true));
    Set(props, "prefixes", std::move(prefixes));
    for (const std::string& key : NodeOutputsKeys()) {
      if (!props.HasMember(key.c_str())) throw std::logic_error("config schema misses node_outputs key " + key);
    }
    Value outputs = Closed("what this resource publishes on the agent's own Node", std::move(props));
    Set(outputs, "minProperties", Value(1));
    return outputs;
  }

  Value Resource() {
    Value props(rapidjson::kObjectType);
    Set(props, "group", Object("string", "API group; \"\" for the core group"));
    Value version = Object("string", "API version, e.g. v1");
    Set(version, "minLength", Value(1));
    Set(props, "version", std::move(version));
    Value plural = Object("string", "resource plural, e.g. widgets");
    Set(plural, "minLength", Value(1));
    Set(props, "plural", std::move(plural));
    Set(props, "namespace", Object("string", "watch one namespace; \"\" = all namespaces"));
    const char* selector = "a selector; {node} stands for this node's name";
    Set(props, "label_selector", Object("string", std::string("label ") + selector));
    Set(props, "field_selector", Object("string", std::string("field ") + selector));
    Value ignored = Object("array", "dotted paths left out when comparing versions of an object");
    Set(ignored, "items", DottedPath("e.g. metadata.annotations.note"));
    Set(props, "ignored_paths", std::move(ignored));
    Set(props, "node_selector_path", DottedPath("node targeting: the object's label-map node selector, e.g. spec.nodeSelector"));
    Set(props, "finalizer", Object("boolean", "per-node finalizers, for multi-step deletion"));
    Set(props, "success_events", Object("boolean", "post a Normal Event when a handler succeeds"));
    Set(props, "singleton", Object("boolean", "only the agent holding the Lease runs this resource's hooks"));
    Set(props, "hooks", Hooks());
    Set(props, "rollout", Rollout());
    Set(props, "node_outputs", NodeOutputs());
    Value ready = Object("string", "the type of the condition kept in each object's status.conditions: True once "
                                   "every node that handles it handled its current state, e.g. Ready");
    Set(ready, "pattern", Str(kConditionTypePattern));
    Set(props, "ready_condition", std::move(ready));
    for (const std::string& key : ResourceKeys()) {
      if (!props.HasMember(key.c_str())) throw std::logic_error("config schema misses resource key " + key);
    }
    Value resource = Closed("one watched resource", std::move(props), {"version", "plural", "hooks"});
    Value rules(rapidjson::kArrayType);
    rules.PushBack(SingletonRule(), a_);
    Set(resource, "allOf", std::move(rules));
    return resource;
  }

  Value Api() {
    Value props(rapidjson::kObjectType);
    Value in_cluster = Object("boolean", "use the pod's service account");
    Set(in_cluster, "const", Value(true));
    Set(props, "in_cluster", std::move(in_cluster));
    AddKnobs(props, "api");
    Value api = Closed("how to reach the API server: in_cluster or kubeconfig", std::move(props));
    Value both(rapidjson::kObjectType);
    Set(both, "required", Strings({"in_cluster", "kubeconfig"}));
    Set(api, "not", std::move(both));
    return api;
  }

  Value Root() {
    Value props(rapidjson::kObjectType);
    AddKnobs(props, "");
    Set(props, "api", Api());
    Value resources = Object("array", "the resources to watch");
    Set(resources, "minItems", Value(1));
    Set(resources, "items", Resource());
    Set(props, "resources", std::move(resources));
    Value tuning(rapidjson::kObjectType);
    AddKnobs(tuning, "tuning");
    Set(props, "tuning", Closed("tuning knobs; each also has a flag and an environment variable", std::move(tuning)));
    Value root = Closed("nodehook config file", std::move(props), {"resources"});
    Set(root, "$schema", Str("http://json-schema.org/draft-07/schema#"));
    Set(root, "title", Str("nodehook config"));
    return root;
  }

 private:
  rapidjson::Document::AllocatorType& a_;
};

}  // namespace

std::string ConfigSchemaJson() {
  rapidjson::Document doc;
  SchemaBuilder builder(doc.GetAllocator());
  Value root = builder.Root();
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  root.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace nodehook
