#include "agent/app/state_command.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <unistd.h>

#include "agent/base/printable.h"
#include "agent/config/config.h"
#include "storage/sqlite_state_store.h"
#include "storage/state_report.h"

namespace nodehook {
namespace {

std::string KnobEnv(const std::string& knob) {
  for (const KnobInfo& info : Knobs()) {
    if (info.name == knob && !info.env.empty()) {
      const char* value = std::getenv(info.env.c_str());
      return value != nullptr ? value : "";
    }
  }
  return "";
}

// state_file and node_name by precedence flag > environment > config file.
bool ResolveTarget(const StateCommandArgs& args, std::string* state_file, std::string* node_name, std::ostream& err) {
  *state_file = !args.state_file.empty() ? args.state_file : KnobEnv("state_file");
  *node_name = !args.node_name.empty() ? args.node_name : KnobEnv("node_name");
  if (!args.config_path.empty() && (state_file->empty() || node_name->empty())) {
    ConfigSources sources = EnvironmentSources();
    sources.check_program = nullptr;  // reading the state needs no hook programs
    if (!args.state_file.empty()) sources.flags["state_file"] = args.state_file;
    if (!args.node_name.empty()) sources.flags["node_name"] = args.node_name;
    ConfigResult loaded = LoadConfigFile(args.config_path, sources);
    if (!loaded.ok()) {
      for (const auto& e : loaded.errors) err << e.ToString(args.config_path) << "\n";
      return false;
    }
    if (state_file->empty()) *state_file = loaded.config.state_file;
    if (node_name->empty()) *node_name = loaded.config.node_name;
  }
  // No node name is fine: OpenForNode takes it from a file that holds one node.
  if (state_file->empty()) err << "nodehook state: no state file: pass --state-file, set NODEHOOK_STATE_FILE or --config\n";
  return !state_file->empty();
}

// The store for `node_name`, or, when that is "", for the one node the file holds. Sets *usage
// when the node must be named (the file holds none or several).
Result<std::unique_ptr<SqliteStateStore>> OpenForNode(const std::string& state_file, const std::string& node_name,
                                                      bool* usage) {
  auto store = SqliteStateStore::Open(state_file, node_name, StoreOptions{});
  if (!store.ok() || !node_name.empty()) return store;
  auto nodes = (*store)->NodesInFile();
  if (!nodes.ok()) return nodes.status();
  if (nodes->size() == 1) return SqliteStateStore::Open(state_file, nodes->front(), StoreOptions{});
  *usage = true;
  if (nodes->empty()) {
    return InvalidError("no node name, and " + state_file + " holds no node's records: pass --node-name, set "
                        "NODE_NAME or --config");
  }
  std::string names;
  for (const std::string& n : *nodes) names += (names.empty() ? "" : ", ") + n;
  return InvalidError("no node name, and " + state_file + " holds several nodes' records (" + names +
                      "): pass --node-name, set NODE_NAME or --config");
}

int Fail(std::ostream& err, const Status& status) {
  err << "nodehook state: " << status.message() << "\n";
  return 1;
}

// Says exactly what the request changed: each handler made due, and whether it was a permanent
// failure that now runs once more. Handlers the store left alone (their object is gone, so only
// its delete could run) are named too, so nothing is reported as queued that will not run.
int Retry(SqliteStateStore& store, const ObjectView& view, const std::string& handler, int64_t now,
          std::ostream& out, std::ostream& err) {
  auto retried = store.RequestRetry(view.uid, handler, now);
  if (!retried.ok()) return Fail(err, retried.status());
  auto which = [&](const std::string& h) { return "handler " + h + " of " + view.Key() + " (" + view.uid + ")"; };
  for (const HandlerRecord& h : view.handlers) {
    bool made_due = std::any_of(retried->begin(), retried->end(),
                                [&](const RetriedHandler& r) { return r.handler == h.handler; });
    if (!made_due && (handler.empty() || handler == h.handler)) {
      out << "not retried: " << which(h.handler) << ": the object is gone, so nothing would run it\n";
    }
  }
  for (const RetriedHandler& r : *retried) {
    if (r.revived) {
      out << "retry requested: " << which(r.handler) << " had given up after " << r.retries
          << " failed attempts; it runs once more now (a new failure gives up again)\n";
    } else {
      out << "retry requested: " << which(r.handler) << " is due now\n";
    }
  }
  out << "a running agent runs it within about 2s; a stopped one when it starts\n";
  return 0;
}

// A record that cannot be read (the agent quarantined its object): forget drops it by uid, the
// other actions say what is wrong and how to clear it.
int Unreadable(SqliteStateStore& store, const StateCommandArgs& args, const Status& why, std::ostream& out,
               std::ostream& err) {
  if (args.action != "forget") {
    err << "nodehook state: " << why.message() << "\nIts object is quarantined on this node; `nodehook state forget "
        << args.uid << "` drops the record (the agent then handles the object as new).\n";
    return 1;
  }
  Status forgotten = store.Forget(args.uid);
  if (!forgotten.ok()) return Fail(err, forgotten);
  out << "forgot " << args.uid << " (its record could not be read): the agent treats it as new (create runs again) "
                                  "the next time it handles it\n";
  return 0;
}

// Tables and details are for people: what hooks wrote is escaped (EscapeForTerminal), always, not
// only on a terminal, so `state show | less -R` or a log of the command is just as safe. --json
// is for programs, and JSON escapes control characters itself.
int Run(SqliteStateStore& store, const StateCommandArgs& args, std::ostream& out, std::ostream& err, int64_t now) {
  if (args.action == "list") {
    auto views = CollectObjectViews(store);
    if (!views.ok()) return Fail(err, views.status());
    out << (args.json ? ObjectsToJson(*views, now, /*with_diffbase=*/false)
                      : EscapeForTerminal(FormatObjectTable(*views, now)));
    return 0;
  }
  auto view = FindObjectView(store, args.uid);
  if (!view.ok() && view.status().code() == StatusCode::kCorrupt) return Unreadable(store, args, view.status(), out, err);
  if (!view.ok()) return Fail(err, view.status());
  if (args.action == "show") {
    out << (args.json ? ObjectToJson(*view, now) : EscapeForTerminal(FormatObjectDetail(*view, now)));
    return 0;
  }
  if (args.action == "retry") return Retry(store, *view, args.handler, now, out, err);
  // forget
  Status forgotten = store.Forget(view->uid);
  if (!forgotten.ok()) return Fail(err, forgotten);
  out << "forgot " << view->Key() << " (" << view->uid
      << "): its diffbase and progress are gone, so the agent treats it as new (create runs again) "
         "the next time it handles it\n";
  return 0;
}

}  // namespace

CLI::App* AddStateCommand(CLI::App& app, StateCommandArgs* args) {
  CLI::App* state = app.add_subcommand("state", "Inspect this node's state file: list, show, retry, forget");
  state->require_subcommand(1);
  state->add_option("--config,-c", args->config_path, "Config file to take state_file and node_name from");
  state->add_option("--state-file", args->state_file, "SQLite state file (env NODEHOOK_STATE_FILE)");
  state->add_option("--node-name", args->node_name,
                    "Node whose records to show (env NODE_NAME; default: the file's only node)");
  state->add_flag("--json", args->json, "Print JSON for scripts instead of a table");

  auto action = [&](const char* name, const char* help) {
    CLI::App* sub = state->add_subcommand(name, help);
    sub->fallthrough();  // the options above may also come after the action
    sub->callback([args, name] { args->action = name; });
    return sub;
  };
  action("list", "Every object this node remembers, with its handlers' progress");
  const char* object_help = "Object uid, or namespace/name (a cluster-scoped object's name)";
  action("show", "Everything stored about one object")->add_option("object", args->uid, object_help)->required();
  CLI::App* retry = action("retry",
                           "Make pending handlers of an object due now (reviving permanent failures for one more "
                           "run), and ask a running agent to look");
  retry->add_option("object", args->uid, object_help)->required();
  retry->add_option("handler", args->handler, "One handler (create, update, delete, resume); default: all");
  action("forget", "Drop an object's diffbase and progress: the agent treats it as new")
      ->add_option("object", args->uid, object_help)
      ->required();
  return state;
}

int RunStateCommand(const StateCommandArgs& args, std::ostream& out, std::ostream& err, const Clock& clock) {
  std::string state_file;
  std::string node_name;
  if (!ResolveTarget(args, &state_file, &node_name, err)) return 2;
  // Never create a state file just to report that it is empty.
  if (access(state_file.c_str(), F_OK) != 0) {
    err << "nodehook state: no state file at " << state_file << "\n";
    return 1;
  }
  bool usage = false;
  auto store = OpenForNode(state_file, node_name, &usage);
  if (!store.ok()) {
    Fail(err, store.status());
    return usage ? 2 : 1;
  }
  return Run(**store, args, out, err, ToMillis(clock.Now()));
}

}  // namespace nodehook
