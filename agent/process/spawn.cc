#include "agent/process/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>
#include <vector>

#include "agent/process/child_ledger.h"

namespace nodehook {
namespace {

// What the child was doing when it failed; sent to the parent with the errno.
enum ChildStage : int { kSetProcessGroup = 1, kRedirectStdio = 2, kExec = 3 };

// The child runs on its own stack in the agent's memory until it execs (see SpawnChild); this is
// plenty for RunChild, and pages it never touches cost nothing.
constexpr size_t kChildStackBytes = 128 * 1024;

// One child stack per spawning thread, mapped at its first spawn and kept until the thread ends:
// with CLONE_VFORK the thread sleeps until its child has exec'd or exited, so the stack is free
// again when clone returns, and an munmap per hook (a TLB shootdown on every CPU) is saved.
class ThreadChildStack {
 public:
  ~ThreadChildStack() {
    if (base_ != MAP_FAILED) munmap(base_, kChildStackBytes);
  }
  // The top of the stack (it grows down), or nullptr when it cannot be mapped (errno says why).
  char* Top() {
    if (base_ == MAP_FAILED) {
      base_ = mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    }
    return base_ == MAP_FAILED ? nullptr : static_cast<char*>(base_) + kChildStackBytes;
  }

 private:
  void* base_ = MAP_FAILED;
};

thread_local ThreadChildStack child_stack;

// Everything the child touches after clone: plain ints and pointers into memory prepared before.
// The child shares our memory (CLONE_VM) and we wait until it has exec'd or exited (CLONE_VFORK),
// so it reports a failure by writing `failed_stage` and `failed_errno` here, as glibc's
// posix_spawn does: no pipe to make, read and close per hook.
struct ChildSetup {
  int stdin_read;
  int output_write;
  char* const* argv;
  char* const* envp;
  const char* const* candidates;
  size_t candidate_count;
  int max_fd;  // fallback bound for closing descriptors when close_range() is unavailable
  pid_t agent_pid;
  volatile int failed_stage;  // 0 while nothing failed; written only by the child
  volatile int failed_errno;
};

// The descriptor bound for the close fallback, read once per process (a system call per hook
// otherwise). The pid is not cached: a forked process (a test's "agent") has its own.
int MaxFd() {
  static const int max_fd = static_cast<int>(std::clamp(sysconf(_SC_OPEN_MAX), 256L, 65536L));
  return max_fd;
}

std::vector<char*> NullTerminated(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// A descriptor below 3 would be clobbered by the child's dup2 onto stdin/stdout/stderr.
int MoveAboveStdio(int fd) {
  if (fd < 0 || fd >= 3) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

Status MakePipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return UnavailableError("pipe: " + ErrnoText(errno));
  read_end->Reset(MoveAboveStdio(fds[0]));
  write_end->Reset(MoveAboveStdio(fds[1]));
  if (!read_end->valid() || !write_end->valid()) return UnavailableError("pipe: " + ErrnoText(errno));
  return Status::Ok();
}

// For a pipe end just made: it has no other status flag to keep, so no F_GETFL first.
Status SetNonBlocking(int fd) {
  if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) return InternalError("fcntl: " + ErrnoText(errno));
  return Status::Ok();
}

// ---- Child side: async-signal-safe calls only from here to execve. The child shares the
// agent's memory (CLONE_VM) while the spawning thread waits, so it must not touch the heap,
// locks or anything but its own stack and the ChildSetup. ----

[[noreturn]] void ReportAndExit(ChildSetup& s, ChildStage stage, int err) {
  s.failed_errno = err;
  s.failed_stage = stage;
  _exit(127);
}

void CloseRange(unsigned first, unsigned last, int max_fd) {
  if (first > last) return;
  if (close_range(first, last, 0) == 0) return;
  for (unsigned fd = first; fd <= last && fd < static_cast<unsigned>(max_fd); ++fd) close(static_cast<int>(fd));
}

[[noreturn]] void RunChild(ChildSetup& s) {
  // Ignored signals would stay ignored across exec; handled ones reset anyway. Start clean.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  if (setpgid(0, 0) != 0) ReportAndExit(s, kSetProcessGroup, errno);
  // A hook must not outlive an agent that was killed (SIGKILL, OOM): the next agent runs the
  // hook again, and two runs for one object must never overlap. The check after prctl closes
  // the window in which the agent died before the request was made.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != s.agent_pid) _exit(127);
  if (dup2(s.stdin_read, 0) < 0 || dup2(s.output_write, 1) < 0 || dup2(s.output_write, 2) < 0) {
    ReportAndExit(s, kRedirectStdio, errno);
  }
  CloseRange(3, ~0U, s.max_fd);

  // execvp's rules: keep searching past "not here", remember "not allowed", stop on anything else.
  int err = ENOENT;
  bool saw_eacces = false;
  for (size_t i = 0; i < s.candidate_count; ++i) {
    execve(s.candidates[i], s.argv, s.envp);
    err = errno;
    if (err == EACCES) {
      saw_eacces = true;
    } else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV && err != ETIMEDOUT) {
      ReportAndExit(s, kExec, err);
    }
  }
  ReportAndExit(s, kExec, saw_eacces ? EACCES : err);
}

int ChildEntry(void* setup) { RunChild(*static_cast<ChildSetup*>(setup)); }

// ---- Parent side. ----

std::string DescribeFailure(int stage, int err, const std::string& program) {
  switch (stage) {
    case kSetProcessGroup: return "setpgid: " + ErrnoText(err);
    case kRedirectStdio: return "redirect stdio: " + ErrnoText(err);
    default: return "exec " + program + ": " + ErrnoText(err);
  }
}

}  // namespace

std::string ErrnoText(int err) { return std::generic_category().message(err); }

Result<SpawnedChild> SpawnChild(const ExecPlan& plan) {
  if (plan.argv.empty()) return InvalidError("exec: empty argv");
  std::vector<char*> argv = NullTerminated(plan.argv);
  std::vector<char*> envp = plan.Envp();
  std::vector<const char*> candidates;
  for (const std::string& c : plan.candidates) candidates.push_back(c.c_str());

  UniqueFd stdin_read, stdin_write, output_read, output_write;
  NODEHOOK_RETURN_IF_ERROR(MakePipe(&stdin_read, &stdin_write));
  NODEHOOK_RETURN_IF_ERROR(MakePipe(&output_read, &output_write));
  NODEHOOK_RETURN_IF_ERROR(SetNonBlocking(stdin_write.get()));
  NODEHOOK_RETURN_IF_ERROR(SetNonBlocking(output_read.get()));

  ChildSetup setup{stdin_read.get(), output_write.get(), argv.data(), envp.data(), candidates.data(),
                   candidates.size(), MaxFd(), getpid(), 0, 0};

  // No signal handler may run in the child before it has reset the dispositions.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  ChildLedger& ledger = ChildLedger::Instance();
  // clone(CLONE_VM | CLONE_VFORK), as glibc's posix_spawn does it: fork() of a process with many
  // threads and mappings copies every page table (most of the agent's CPU per hook), while this
  // child borrows the agent's memory and this thread sleeps until it has exec'd or exited.
  // posix_spawn itself cannot set PR_SET_PDEATHSIG. No atfork handler runs.
  char* stack_top = child_stack.Top();
  pid_t pid = -1;
  int start_errno = errno;
  {
    ReaderMutexLock spawn_window(&ledger.spawn_window());
    if (stack_top != nullptr) {
      pid = clone(ChildEntry, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
      start_errno = errno;
    }
    if (pid > 0) ledger.Track(pid);  // before an orphan reaper may look: this exit status is ours
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);

  stdin_read.Reset();
  output_write.Reset();
  if (pid < 0) return UnavailableError(std::string(stack_top == nullptr ? "mmap child stack: " : "clone: ") +
                                       ErrnoText(start_errno));

  // clone returned, so the child has exec'd or exited: what it wrote into `setup` is final.
  if (setup.failed_stage != 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    ledger.Untrack(pid);
    return InvalidError(DescribeFailure(setup.failed_stage, setup.failed_errno, plan.argv[0]));
  }
  return SpawnedChild{pid, std::move(stdin_write), std::move(output_read)};
}

}  // namespace nodehook
