#include "storage/state_file.h"

#include <unistd.h>

#include "agent/base/log.h"
#include "storage/disk_space.h"
#include "storage/integrity.h"
#include "storage/state_permissions.h"

namespace nodehook {

namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

// A full disk refuses the start whatever the last stop was. After a clean stop SQLite could not
// create its -shm and -wal files ("disk I/O error"); after a kill it would write into the WAL it
// kept until that is full too. One answer for both, and no hook runs whose outcome cannot be kept.
Status CheckStateFreeSpace(const std::string& path) {
  const std::string dir = StateDirectoryOf(path);
  Result<uint64_t> free_bytes = FreeBytes(dir);
  if (!free_bytes.ok() || *free_bytes >= kStateLowSpaceBytes) return Status::Ok();
  return UnavailableError(NoSpaceMessage(dir, *free_bytes) + "; the agent needs " +
                          std::to_string(kStateLowSpaceBytes) + " bytes free to start");
}

namespace {

// The state file is gone although an agent held its lock before: say so, and move aside a WAL
// left without its main file, which SQLite would otherwise apply to the new, empty one.
Status NoteMissingFile(const std::string& path, const PriorUse& prior, const Clock& clock) {
  Log(LogLevel::kWarn, "state file is gone; starting with an empty state: every create hook runs again",
      {{"state_file", path}, {"lock_file", path + ".lock"},
       {"last_holder", prior.last_holder.empty() ? "unknown (stopped cleanly)" : prior.last_holder},
       {"next", "start with an empty state"}});
  if (!Exists(path + "-wal") && !Exists(path + "-shm")) return Status::Ok();
  Result<std::string> moved = MoveAside(path, clock.Now(), "orphan");
  if (!moved.ok()) return moved.status();
  Log(LogLevel::kWarn, "state file's WAL left without it; moved it aside",
      {{"state_file", path}, {"moved_to", *moved + "-wal"}, {"next", "start with an empty state"}});
  return Status::Ok();
}

}  // namespace

Status PrepareStateDirectory(const std::string& state_file, const std::string& scratch,
                             const StateDirectoryRules& rules) {
  const std::string dir = StateDirectoryOf(state_file);
  if (Result<int64_t> type = rules.probe(dir); type.ok()) {
    if (const char* name = VolatileFileSystemName(*type)) {
      Log(LogLevel::kWarn, "state file on a file system in memory, accepted by allow_volatile_state",
          {{"state_file", state_file}, {"file_system", name},
           {"next", "continue; after a reboot the state is gone and every create hook runs again"}});
    }
  }
  Result<TightenedPermissions> tightened = TightenStatePermissions(state_file, scratch);
  if (!tightened.ok()) return tightened.status();
  if (!tightened->changed.empty()) {
    Log(LogLevel::kWarn, "state was readable by others; made it private",
        {{"state_file", state_file}, {"changed", Join(tightened->changed)}, {"next", "continue starting"}});
  }
  if (!tightened->shared_dirs.empty()) {
    Log(LogLevel::kWarn, "directory shared with other files keeps its permissions",
        {{"state_file", state_file}, {"directories", Join(tightened->shared_dirs)},
         {"next", "continue; the state files are 0600, give them a directory of their own to make it 0700 too"}});
  }
  return Status::Ok();
}

Result<OpenedState> OpenStateForAgent(const std::string& path, const std::string& node_name,
                                      const StoreOptions& options, const Clock& clock,
                                      const StateDirectoryRules& rules, const PriorUse& prior) {
  NODEHOOK_RETURN_IF_ERROR(CheckStateDirectory(path, rules));
  NODEHOOK_RETURN_IF_ERROR(CheckStateFreeSpace(path));
  OpenedState opened;
  if (!Exists(path) && prior.lock_file_existed) {
    opened.state_file_missing = true;
    NODEHOOK_RETURN_IF_ERROR(NoteMissingFile(path, prior, clock));
  } else if (Exists(path)) {
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
