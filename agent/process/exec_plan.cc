#include "agent/process/exec_plan.h"

#include <algorithm>
#include <optional>

namespace nodehook {
namespace {

std::string_view KeyOf(std::string_view entry) { return entry.substr(0, entry.find('=')); }

std::vector<std::string> EntriesOf(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::string> entries;
  entries.reserve(pairs.size());
  for (const auto& [key, value] : pairs) entries.push_back(key + "=" + value);
  return entries;
}

}  // namespace

BaseEnvironment::BaseEnvironment(const char* const* env) {
  std::unordered_map<std::string_view, bool> seen;
  for (const char* const* entry = env; entry && *entry; ++entry) {
    if (seen.emplace(KeyOf(*entry), true).second) entries_.emplace_back(*entry);
  }
  // Views only once entries_ no longer grows (a moved short string changes its address).
  for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(KeyOf(entries_[i]), i);
}

std::vector<char*> BaseEnvironment::Envp(const std::vector<std::string>& overrides) const {
  std::vector<char*> envp;
  envp.reserve(entries_.size() + overrides.size() + 1);
  for (const std::string& entry : entries_) envp.push_back(const_cast<char*>(entry.c_str()));
  const size_t base_size = envp.size();
  for (const std::string& entry : overrides) {
    const std::string_view key = KeyOf(entry);
    char* text = const_cast<char*>(entry.c_str());
    if (auto it = index_.find(key); it != index_.end()) {
      envp[it->second] = text;
      continue;
    }
    // A key the base lacks, repeated in `overrides` (rare, and there are few): the last wins.
    auto appended = std::find_if(envp.begin() + static_cast<std::ptrdiff_t>(base_size), envp.end(),
                                 [&](const char* e) { return KeyOf(e) == key; });
    if (appended != envp.end()) {
      *appended = text;
    } else {
      envp.push_back(text);
    }
  }
  envp.push_back(nullptr);
  return envp;
}

std::optional<std::string> BaseEnvironment::Get(std::string_view key) const {
  auto it = index_.find(key);
  if (it == index_.end() || entries_[it->second].size() <= key.size()) return std::nullopt;  // "KEY" without '='
  return entries_[it->second].substr(key.size() + 1);
}

std::vector<std::string> MergeEnvironment(const char* const* base_env,
                                          const std::vector<std::pair<std::string, std::string>>& overrides) {
  const BaseEnvironment base(base_env);
  const std::vector<std::string> entries = EntriesOf(overrides);
  std::vector<std::string> env;
  for (const char* entry : base.Envp(entries)) {
    if (entry != nullptr) env.emplace_back(entry);
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

ExecPlan MakeExecPlan(const ActionRequest& request, std::shared_ptr<const BaseEnvironment> base) {
  ExecPlan plan;
  plan.argv = request.argv;
  plan.base = std::move(base);
  plan.env = EntriesOf(request.env);
  // Like execvp, but with the hook's PATH (the agent's unless the request overrides it).
  std::optional<std::string> path = plan.base->Get("PATH");
  for (const auto& [key, value] : request.env) {
    if (key == "PATH") path = value;
  }
  if (!plan.argv.empty()) plan.candidates = ProgramCandidates(plan.argv[0], path);
  return plan;
}

}  // namespace nodehook
