#include "agent/kube/credentials/plugin_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/process/child_ledger.h"
#include "agent/process/exec_plan.h"
#include "agent/process/unique_fd.h"

extern char** environ;  // POSIX; not declared by any standard C++ header

namespace nodehook {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::string Errno(int err) {
  char buffer[256];
  return strerror_r(err, buffer, sizeof buffer);  // GNU variant: returns the text
}

// Owns the spawn attributes and file actions for one child.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attr_);
    posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // stdin from /dev/null, stdout and stderr into the given pipe ends; own process group; signal
  // mask emptied and every signal back to its default action.
  void Prepare(int stdout_fd, int stderr_fd) {
    posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions_, stdout_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions_, stderr_fd, STDERR_FILENO);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  }

  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Result<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return InvalidError("pipe: " + Errno(errno));
  Pipe p;
  p.read.Reset(fds[0]);
  p.write.Reset(fds[1]);
  return p;
}

// Reads both pipes until both close, the deadline passes or stdout grows too large.
enum class Drain { kClosed, kTimedOut, kTooMuchOutput };

Drain DrainPipes(int out_fd, int err_fd, SteadyClock::time_point deadline, PluginOutput* output) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open = 2;
  char buffer[16 * 1024];
  while (open > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
    if (left <= 0) return Drain::kTimedOut;
    int ready = ::poll(fds, 2, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) return Drain::kTimedOut;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i].fd = -1;
        --open;
        continue;
      }
      std::string& sink = i == 0 ? output->out : output->err;
      sink.append(buffer, static_cast<size_t>(n));
      if (i == 0 && sink.size() > kPluginMaxStdout) return Drain::kTooMuchOutput;
      if (i == 1 && sink.size() > kPluginMaxStderr) sink.erase(0, sink.size() - kPluginMaxStderr);
    }
  }
  return Drain::kClosed;
}

int WaitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

Result<PluginOutput> RunPlugin(const PluginCommand& command) {
  if (command.argv.empty() || command.argv[0].empty()) return InvalidError("no command to run");
  const std::string& name = command.argv[0];
  auto out_pipe = MakePipe();
  if (!out_pipe.ok()) return out_pipe.status();
  auto err_pipe = MakePipe();
  if (!err_pipe.ok()) return err_pipe.status();

  std::vector<std::string> env = MergeEnvironment(environ, command.env);
  std::vector<char*> envp, argv;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command.argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  SpawnSetup setup;
  setup.Prepare(out_pipe->write.get(), err_pipe->write.get());
  pid_t pid = -1;
  ChildLedger& ledger = ChildLedger::Instance();
  int rc;
  {
    // Tracked before the orphan reaper may look (child_ledger.h): this exit status is ours.
    ReaderMutexLock spawn_window(&ledger.spawn_window());
    // posix_spawnp searches the agent's PATH, as kubectl searches its own.
    rc = ::posix_spawnp(&pid, name.c_str(), setup.actions(), setup.attr(), argv.data(), envp.data());
    if (rc == 0) ledger.Track(pid);
  }
  if (rc != 0) return InvalidError("exec " + name + ": " + Errno(rc));
  out_pipe->write.Reset();
  err_pipe->write.Reset();

  PluginOutput output;
  Drain drained = DrainPipes(out_pipe->read.get(), err_pipe->read.get(), SteadyClock::now() + command.timeout, &output);
  if (drained != Drain::kClosed) ::kill(-pid, SIGKILL);
  int status = WaitFor(pid);
  ledger.Untrack(pid);
  if (drained == Drain::kTimedOut) {
    return Status(StatusCode::kTimeout, name + " did not finish within " +
                                            std::to_string(command.timeout.count()) + "ms and was killed");
  }
  if (drained == Drain::kTooMuchOutput) {
    return UnavailableError(name + " wrote more than " + std::to_string(kPluginMaxStdout) + " bytes to stdout");
  }
  if (WIFSIGNALED(status)) {
    return UnavailableError(name + " was killed by signal " + std::to_string(WTERMSIG(status)) +
                            (output.err.empty() ? "" : "; stderr: " + output.err));
  }
  output.exit_code = WEXITSTATUS(status);
  return output;
}

}  // namespace nodehook
