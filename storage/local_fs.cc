#include "storage/local_fs.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace nodehook {
namespace {

struct FsName {
  int64_t magic;
  const char* name;
};

// Magic numbers from linux/magic.h and the file systems' own sources.
constexpr FsName kUnsafe[] = {
    {0x6969, "nfs"},
    {0x517B, "smb"},
    {0xFF534D42, "cifs"},
    {0xFE534D42, "smb2"},
    {0x65735546, "fuse"},  // sshfs, s3fs, glusterfs, rclone, ... all report plain "fuse"
    {0x00C36400, "ceph"},
    {0x01021997, "9p"},
    {0x5346414F, "afs"},
    {0x6B414653, "kafs"},
    {0x73757245, "coda"},
    {0x564C, "ncp"},
    {0x01161970, "gfs2"},
    {0x7461636F, "ocfs2"},
    {0x0BD00BD0, "lustre"},
    {0x47504653, "gpfs"},
    {0x20030528, "orangefs"},
    {0x786F4256, "vboxsf"},
};

constexpr FsName kVolatile[] = {
    {0x01021994, "tmpfs"},
    {0x858458F6, "ramfs"},
};

const char* NameIn(const FsName* begin, const FsName* end, int64_t f_type) {
  for (const FsName* fs = begin; fs != end; ++fs) {
    if (fs->magic == f_type) return fs->name;
  }
  return nullptr;
}

std::string Hex(int64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace

Result<int64_t> StatfsType(const std::string& dir) {
  struct statfs info {};
  if (statfs(dir.c_str(), &info) != 0) {
    return UnavailableError("cannot statfs state directory " + dir + ": " + std::strerror(errno));
  }
  // f_type is a signed word on some ABIs; magic numbers are 32-bit unsigned.
  return static_cast<int64_t>(static_cast<uint32_t>(info.f_type));
}

const char* UnsafeFileSystemName(int64_t f_type) { return NameIn(std::begin(kUnsafe), std::end(kUnsafe), f_type); }

const char* VolatileFileSystemName(int64_t f_type) {
  return NameIn(std::begin(kVolatile), std::end(kVolatile), f_type);
}

std::string StateDirectoryOf(const std::string& state_file) {
  size_t slash = state_file.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return state_file.substr(0, slash);
}

Status CheckStateDirectory(const std::string& state_file, const StateDirectoryRules& rules) {
  std::string dir = StateDirectoryOf(state_file);
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    return InvalidError("state directory " + dir + " of state file " + state_file + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return InvalidError("state directory " + dir + " is not a directory");
  Result<int64_t> type = rules.probe(dir);
  if (!type.ok()) return type.status();
  if (const char* name = UnsafeFileSystemName(*type)) {
    return InvalidError("state directory " + dir + " is on " + name + " (statfs type " + Hex(*type) +
                        "), a network or FUSE file system where SQLite's WAL locking and shared memory "
                        "are unsafe; put state_file on a local disk (e.g. a hostPath)");
  }
  if (const char* name = VolatileFileSystemName(*type); name != nullptr && !rules.allow_volatile) {
    return InvalidError("state directory " + dir + " is on " + name + " (statfs type " + Hex(*type) +
                        "), which is emptied on every reboot: every object would then look new and its create "
                        "hook would run again; put state_file on a disk (e.g. a hostPath), or accept this with "
                        "allow_volatile_state (--allow-volatile-state, NODEHOOK_ALLOW_VOLATILE_STATE)");
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return InvalidError("state directory " + dir + " is not writable: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace nodehook
