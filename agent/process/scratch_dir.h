// ScratchDir: a private directory for one hook run, `<work_dir>/hook-XXXXXX` (mode 0700). The
// agent writes the hook's input files into it and reads back what the hook wrote. The hook may do
// anything to the directory meanwhile, so every access goes through a descriptor of the directory
// as created and never follows a symbolic link: a hook that replaces a file by a link, a FIFO or a
// device, or the directory itself by a link, cannot make the agent block, read another file or
// delete anything outside. The directory and everything left in it are removed on Remove() or
// destruction (remove_tree.h). Move-only; owned by one thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/process/unique_fd.h"
#include "agent/base/status.h"

namespace nodehook {

class ScratchDir {
 public:
  // Creates `work_dir` (0700) if missing, then a fresh directory inside it.
  static Result<ScratchDir> Create(const std::string& work_dir);

  ~ScratchDir();
  ScratchDir(ScratchDir&&) noexcept = default;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // The path the hook is told about.
  const std::string& path() const { return path_; }
  std::string PathOf(std::string_view name) const { return path_ + "/" + std::string(name); }

  // Creates the file `name` (0600) holding `content`; fails if anything exists under that name.
  Status WriteFile(std::string_view name, std::string_view content) const;

  // What the hook wrote to `name`: nullopt when there is no such file. Opening never blocks and
  // never follows a link; an error says why the file cannot be used, e.g. "result file is not a
  // regular file (a FIFO)" or "result file is 52428800 bytes, the limit is 65536". `what` is how
  // the file is named in messages ("result file").
  Result<std::optional<std::string>> ReadHookFile(std::string_view name, std::string_view what, size_t limit) const;

  // Readies the directory for another run (ScratchPool): unlinks the names written or read here,
  // then true only when it is still our directory under its name, private (0700, ours) and
  // empty. False means something was left (the hook's litter, a changed mode): Remove() it.
  bool ClearForReuse();

  // Removes the directory and everything in it; the error names what was left behind.
  // Usually the directory holds only the files this object wrote or read: those are unlinked by
  // name and the directory removed, without listing it; anything else takes the full walk.
  Status Remove();

 private:
  ScratchDir(UniqueFd parent, UniqueFd dir, std::string name, std::string path);

  UniqueFd parent_fd_;  // the work dir
  UniqueFd dir_fd_;     // this run's directory, as created (invalid once removed)
  std::string name_;    // its entry in the work dir
  std::string path_;
  dev_t dev_ = 0;  // identity of the directory as created
  ino_t ino_ = 0;
  // Names written or read here, so Remove() can usually unlink them without listing the directory.
  mutable std::vector<std::string> known_names_;
};

}  // namespace nodehook
