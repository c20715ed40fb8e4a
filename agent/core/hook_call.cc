#include "agent/core/hook_call.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "agent/base/private_file.h"

namespace nodehook {
namespace {

// 0600 whatever the umask: the files hold whole objects, secrets in a spec included.
bool WriteFile(const std::string& path, const std::string& content) { return WritePrivateFile(path, content).ok(); }

// A private directory per run, so concurrent hooks never share files.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& parent) {
    ::mkdir(parent.c_str(), 0700);  // may exist already
    std::string templ = parent + "/hook-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) != nullptr) {
      path_ = buf.data();
    } else {
      error_ = "cannot create a scratch directory under " + parent + ": " + std::strerror(errno);
    }
  }
  ~ScratchDir() {
    if (path_.empty()) return;
    for (const char* name : {"old.json", "new.json", "diff.json", "result.json"}) {
      ::unlink((path_ + "/" + name).c_str());
    }
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
};

}  // namespace

namespace {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string content;
  char buf[4096];
  while (in && content.size() < 64 * 1024) {
    in.read(buf, sizeof buf);
    content.append(buf, static_cast<size_t>(in.gcount()));
  }
  return content;
}

HookOutcome CouldNotStart(std::string message) {
  HookOutcome out;
  out.verdict = HookVerdict::kFailed;
  out.message = std::move(message);
  return out;
}

}  // namespace

HookOutcome RunHook(ActionRunner& runner, const HookSpec& spec, const HookInput& input, const std::string& work_dir,
                     const CancelToken& cancel) {
  ScratchDir dir(work_dir);
  if (dir.path().empty()) return CouldNotStart(dir.error());
  const std::string old_file = dir.path() + "/old.json";
  const std::string new_file = dir.path() + "/new.json";
  const std::string diff_file = dir.path() + "/diff.json";
  const std::string result_file = dir.path() + "/result.json";
  bool written = WriteFile(old_file, input.old_object.empty() ? "null" : input.old_object) &&
                 WriteFile(new_file, input.new_object.empty() ? "null" : input.new_object) &&
                 WriteFile(diff_file, input.diff.empty() ? "[]" : input.diff);
  if (!written) return CouldNotStart("cannot write hook input files under " + dir.path());

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
      {"NODEHOOK_OLD_FILE", old_file},
      {"NODEHOOK_NEW_FILE", new_file},
      {"NODEHOOK_DIFF_FILE", diff_file},
      {"NODEHOOK_RESULT_FILE", result_file},
  };
  if (!input.event_type.empty()) request.env.emplace_back("NODEHOOK_EVENT", input.event_type);
  ActionResult result = runner.Run(request, cancel);
  return ClassifyHookResult(result, ReadSmallFile(result_file));
}

}  // namespace nodehook
