// A hook's $NODEHOOK_RESULT_FILE (user code writes it), classified with each way a hook can end.
// Input: one byte choosing the exit code (0 done, 1 retry later (75), 2 in progress (100),
// 3 failed (1), modulo 4, so the seeds can start with a digit), then the file's content.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "agent/hooks/hook_outcome.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr int kExitCodes[] = {0, nodehook::kExitRetryLater, nodehook::kExitInProgress, 1};
  nodehook::ActionResult result;
  result.kind = nodehook::ActionResult::Kind::kExited;
  result.exit_code = kExitCodes[data[0] % 4];
  result.message = "exited " + std::to_string(result.exit_code);
  result.output = "last line of output\n";
  const nodehook::ResultFileContent result_file =
      std::optional<std::string>(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  (void)nodehook::ClassifyHookResult(result, result_file);
  return 0;
}
