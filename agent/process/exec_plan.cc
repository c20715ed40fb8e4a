#include "agent/process/exec_plan.h"

#include <optional>
#include <unordered_map>

namespace nodehook {
namespace {

std::string_view KeyOf(std::string_view entry) { return entry.substr(0, entry.find('=')); }

std::optional<std::string> ValueOf(const std::vector<std::string>& env, std::string_view key) {
  for (const std::string& entry : env) {
    if (KeyOf(entry) == key && entry.size() > key.size()) return entry.substr(key.size() + 1);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> MergeEnvironment(const char* const* base_env,
                                          const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  std::unordered_map<std::string, size_t> index_of_key;
  for (const char* const* entry = base_env; entry && *entry; ++entry) {
    std::string text(*entry);
    std::string key(KeyOf(text));
    if (index_of_key.count(key)) continue;  // getenv() sees the first duplicate; so does the hook
    index_of_key.emplace(std::move(key), env.size());
    env.push_back(std::move(text));
  }
  for (const auto& [key, value] : overrides) {
    std::string text = key + "=" + value;
    auto it = index_of_key.find(key);
    if (it != index_of_key.end()) {
      env[it->second] = std::move(text);
    } else {
      index_of_key.emplace(key, env.size());
      env.push_back(std::move(text));
    }
  }
  return env;
}

std::vector<std::string> ProgramCandidates(std::string_view program, const std::optional<std::string>& path) {
  if (program.empty()) return {};
  if (program.find('/') != std::string_view::npos) return {std::string(program)};
  const std::string search = path ? *path : std::string("/bin:/usr/bin");
  std::vector<std::string> candidates;
  size_t begin = 0;
  while (true) {
    size_t end = search.find(':', begin);
    std::string dir = search.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    candidates.push_back((dir.empty() ? std::string(".") : dir) + "/" + std::string(program));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return candidates;
}

ExecPlan MakeExecPlan(const ActionRequest& request, const char* const* base_env) {
  ExecPlan plan;
  plan.argv = request.argv;
  plan.envp = MergeEnvironment(base_env, request.env);
  // Like execvp, but with the hook's PATH (the agent's unless the request overrides it).
  if (!plan.argv.empty()) plan.candidates = ProgramCandidates(plan.argv[0], ValueOf(plan.envp, "PATH"));
  return plan;
}

}  // namespace nodehook
