// Reads a rollout's node steps: "cordon", "drain", "reboot" and "on_failure" (DrainPolicy and
// RebootPolicy in config.h; docs/configuration.md). Internal to agent/config. Stateless.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/config/json_fields.h"

namespace nodehook {

inline constexpr int kMinDrainSeconds = 1;
inline constexpr int kMaxDrainSeconds = 7 * 24 * 3600;
inline constexpr int kMaxGracePeriodSeconds = 24 * 3600;
inline constexpr int kMinRebootSeconds = 10;
inline constexpr int kMaxRebootSeconds = 24 * 3600;

const std::vector<std::string>& NodeStepKeys();  // the rollout keys read here
const std::vector<std::string>& DrainKeys();
const std::vector<std::string>& RebootKeys();
const std::vector<std::string>& OnFailureNames();

// A label selector as kubectl takes it ("app=web,tier!=db", "env in (a,b)", "!canary"): "" when
// it is one, else what is wrong with it.
std::string LabelSelectorProblem(const std::string& selector);

// Reads the node step keys of `rollout` (at `path`) into `policy`; reports every problem.
void ReadNodeSteps(const rapidjson::Value& rollout, const std::string& path, RolloutPolicy* policy, Diagnostics& diag);

}  // namespace nodehook
