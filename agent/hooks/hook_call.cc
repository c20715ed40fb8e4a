#include "agent/hooks/hook_call.h"

#include "agent/process/scratch_dir.h"
#include "agent/base/log.h"

#include "agent/base/private_file.h"

namespace nodehook {
namespace {

constexpr const char* kResultFileName = "result.json";

HookOutcome CouldNotStart(std::string message) {
  HookOutcome out;
  out.verdict = HookVerdict::kFailed;
  out.message = std::move(message);
  return out;
}

Status WriteInputFiles(const ScratchDir& dir, const HookInput& input) {
  NODEHOOK_RETURN_IF_ERROR(dir.WriteFile("old.json", input.old_object.empty() ? "null" : input.old_object));
  NODEHOOK_RETURN_IF_ERROR(dir.WriteFile("new.json", input.new_object.empty() ? "null" : input.new_object));
  return dir.WriteFile("diff.json", input.diff.empty() ? "[]" : input.diff);
}

ActionRequest MakeRequest(const HookSpec& spec, const HookInput& input, const ScratchDir& dir) {
  ActionRequest request;
  request.argv = spec.argv;
  request.timeout = spec.timeout;
  // The hook reads the object it is about: the new state, or the last known one on delete.
  request.stdin_data = input.new_object.empty() ? input.old_object : input.new_object;
  request.env = {
      {"NODEHOOK_REASON", input.reason},
      {"NODEHOOK_NODE", input.node},
      {"NODEHOOK_RESOURCE", input.resource_id},
      {"NODEHOOK_UID", input.meta.uid},
      {"NODEHOOK_NAMESPACE", input.meta.namespace_name},
      {"NODEHOOK_NAME", input.meta.name},
      {"NODEHOOK_RETRY", std::to_string(input.retry)},
      {"NODEHOOK_OLD_FILE", dir.PathOf("old.json")},
      {"NODEHOOK_NEW_FILE", dir.PathOf("new.json")},
      {"NODEHOOK_DIFF_FILE", dir.PathOf("diff.json")},
      {"NODEHOOK_RESULT_FILE", dir.PathOf(kResultFileName)},
  };
  if (!input.event_type.empty()) request.env.emplace_back("NODEHOOK_EVENT", input.event_type);
  return request;
}

void ReleaseScratchDir(ScratchPool& scratch, ScratchDir dir, const HookInput& input) {
  Status removed = scratch.Release(std::move(dir));
  if (removed.ok()) return;
  Log(LogLevel::kWarn, "hook scratch directory not removed",
      {{"object", input.meta.Key()}, {"uid", input.meta.uid}, {"handler", input.reason},
       {"error", removed.message()}, {"next", "remove it at the next start"}});
}

}  // namespace

HookOutcome RunHook(ActionRunner& runner, const HookSpec& spec, const HookInput& input, ScratchPool& scratch,
                     const CancelToken& cancel) {
  auto dir = scratch.Acquire();
  if (!dir.ok()) return CouldNotStart(dir.status().message());
  if (Status written = WriteInputFiles(*dir, input); !written.ok()) return CouldNotStart(written.message());
  ActionResult result = runner.Run(MakeRequest(spec, input, *dir), cancel);
  ResultFileContent result_file = dir->ReadHookFile(kResultFileName, "result file", kResultFileLimit);
  ReleaseScratchDir(scratch, std::move(*dir), input);
  return ClassifyHookResult(result, result_file);
}

}  // namespace nodehook
