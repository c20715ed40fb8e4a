#include "agent/app/state_command.h"

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
  if (state_file->empty()) err << "nodehook state: no state file: pass --state-file, set NODEHOOK_STATE_FILE or --config\n";
  if (node_name->empty()) err << "nodehook state: no node name: pass --node-name, set NODE_NAME or --config\n";
  return !state_file->empty() && !node_name->empty();
}

int Fail(std::ostream& err, const Status& status) {
  err << "nodehook state: " << status.message() << "\n";
  return 1;
}

std::string HandlerText(const std::string& handler) {
  return handler.empty() ? "every pending handler" : "handler " + handler;
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
  auto view = CollectObjectView(store, args.uid);
  if (!view.ok()) return Fail(err, view.status());
  if (args.action == "show") {
    out << (args.json ? ObjectToJson(*view, now) : EscapeForTerminal(FormatObjectDetail(*view, now)));
    return 0;
  }
  if (args.action == "retry") {
    Status asked = store.RequestRetry(args.uid, args.handler, now);
    if (!asked.ok()) return Fail(err, asked);
    out << "retry requested: " << HandlerText(args.handler) << " of " << view->Key() << " (" << args.uid
        << ") is due now; a running agent picks it up at its next look for retry requests, a stopped one when it starts\n";
    return 0;
  }
  // forget
  Status forgotten = store.Forget(args.uid);
  if (!forgotten.ok()) return Fail(err, forgotten);
  out << "forgot " << view->Key() << " (" << args.uid
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
  state->add_option("--node-name", args->node_name, "Node whose records to show (env NODE_NAME)");
  state->add_flag("--json", args->json, "Print JSON for scripts instead of a table");

  auto action = [&](const char* name, const char* help) {
    CLI::App* sub = state->add_subcommand(name, help);
    sub->fallthrough();  // the options above may also come after the action
    sub->callback([args, name] { args->action = name; });
    return sub;
  };
  action("list", "Every object this node remembers, with its handlers' progress");
  action("show", "Everything stored about one object")->add_option("uid", args->uid, "Object uid")->required();
  CLI::App* retry = action("retry", "Make pending handlers of an object due now, and ask a running agent to look");
  retry->add_option("uid", args->uid, "Object uid")->required();
  retry->add_option("handler", args->handler, "One handler (create, update, delete, resume); default: all");
  action("forget", "Drop an object's diffbase and progress: the agent treats it as new")
      ->add_option("uid", args->uid, "Object uid")
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
  auto store = SqliteStateStore::Open(state_file, node_name, StoreOptions{});
  if (!store.ok()) return Fail(err, store.status());
  return Run(**store, args, out, err, ToMillis(clock.Now()));
}

}  // namespace nodehook
