// `nodehook state list|show|retry|forget`: inspect and nudge this node's state file, offline or
// while an agent runs (WAL lets readers in beside the writer; writes wait up to busy_timeout).
// Registers its own CLI11 subcommand so main.cc only wires it in. Not thread-safe (one call).
#pragma once

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>

#include "agent/base/clock.h"

namespace nodehook {

struct StateCommandArgs {
  std::string action;        // "list", "show", "retry", "forget"
  std::string config_path;   // optional: take state_file and node_name from this config
  std::string state_file;    // --state-file (else $NODEHOOK_STATE_FILE, else the config)
  std::string node_name;     // --node-name (else $NODE_NAME, else the config)
  std::string uid;           // show, retry, forget: a uid or namespace/name
  std::string handler;       // retry: one handler; "" = every pending handler
  bool json = false;
};

// Adds `state` with its four actions to `app`; parsed values land in `*args`.
CLI::App* AddStateCommand(CLI::App& app, StateCommandArgs* args);

// Runs the parsed action. Returns the exit code: 0 done, 1 failed (message on `err`),
// 2 bad usage (no state file; no node name and the file holds none or several nodes).
int RunStateCommand(const StateCommandArgs& args, std::ostream& out, std::ostream& err, const Clock& clock);

}  // namespace nodehook
