#include "storage/state_file.h"

#include <unistd.h>

#include "agent/base/log.h"
#include "storage/integrity.h"

namespace nodehook {

Result<OpenedState> OpenStateForAgent(const std::string& path, const std::string& node_name,
                                      const StoreOptions& options, const Clock& clock,
                                      const FsTypeProbe& probe) {
  NODEHOOK_RETURN_IF_ERROR(CheckStateDirectory(path, probe));
  OpenedState opened;
  if (access(path.c_str(), F_OK) == 0) {
    Result<IntegrityVerdict> verdict = QuickCheck(path);
    if (!verdict.ok()) return verdict.status();
    if (verdict->damaged) {
      Result<std::string> moved = MoveAside(path, clock.Now());
      if (!moved.ok()) return moved.status();
      opened.recovered_from_corruption = true;
      opened.moved_aside_to = *moved;
      opened.corruption_detail = verdict->detail;
      Log(LogLevel::kError, "state file is damaged; moved it aside and starting with an empty state",
          {{"state_file", path}, {"moved_to", *moved}, {"detail", verdict->detail},
           {"next", "adopt existing objects without running create hooks; deletes while down are not seen"}});
    }
  }
  Result<std::unique_ptr<SqliteStateStore>> store = SqliteStateStore::Open(path, node_name, options);
  if (!store.ok()) return store.status();
  opened.store = std::move(*store);
  if (opened.recovered_from_corruption) {
    NODEHOOK_RETURN_IF_ERROR(opened.store->SetAdoptExisting(true));
  }
  return opened;
}

}  // namespace nodehook
