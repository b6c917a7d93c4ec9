#include "worker/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace runledger::worker {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// What the child needs, prepared by the parent: the child runs on the
// parent's memory until it execs, so it allocates nothing and takes no lock.
struct ChildPlan {
  const SpawnSpec* spec;
  char* const* argv;
  char* const* envp;  // nullptr: environ
  pid_t parent;
  const char* cannot_execute;  // "cannot execute NAME: "
};

int child_main(void* arg) {
  const ChildPlan& p = *static_cast<const ChildPlan*>(arg);
  const SpawnSpec& s = *p.spec;
  if (s.new_session) ::setsid();
  if (s.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != p.parent) ::_exit(128 + SIGKILL);
  }
  if (s.stdin_fd >= 0) ::dup2(s.stdin_fd, STDIN_FILENO);
  if (s.stdout_fd >= 0) ::dup2(s.stdout_fd, STDOUT_FILENO);
  if (s.stderr_fd >= 0) ::dup2(s.stderr_fd, STDERR_FILENO);
  for (int fd : s.keep_fds) ::fcntl(fd, F_SETFD, 0);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }
  ::sigprocmask(SIG_SETMASK, &s.blocked, nullptr);
  if (p.envp != nullptr) {
    ::execvpe(p.argv[0], p.argv, p.envp);
  } else {
    ::execvp(p.argv[0], p.argv);
  }
  const int error = errno;
  const char* why = ::strerrordesc_np(error);
  (void)!::write(STDERR_FILENO, p.cannot_execute, std::strlen(p.cannot_execute));
  (void)!::write(STDERR_FILENO, why, std::strlen(why));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(error == ENOENT ? 127 : 126);
}

}  // namespace

pid_t spawn_program(const SpawnSpec& spec) {
  if (spec.argv.empty()) {
    errno = EINVAL;
    return -1;
  }
  std::vector<char*> args = c_strings(spec.argv);
  std::vector<char*> envp;
  if (spec.env != nullptr) envp = c_strings(*spec.env);
  const std::string cannot_execute = "cannot execute " + spec.argv[0] + ": ";
  ChildPlan plan{&spec, args.data(), spec.env != nullptr ? envp.data() : nullptr, ::getpid(),
                 cannot_execute.c_str()};
  // Its own stack: execvp builds each candidate path on it.
  constexpr size_t kStackBytes = 256 * 1024;
  void* stack = ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -1;
  // No handler of the parent may run in the child, on the parent's memory:
  // every signal stays blocked until the child has set them to default.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::clone(child_main, static_cast<char*>(stack) + kStackBytes,
                            CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  const int error = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::munmap(stack, kStackBytes);
  errno = error;
  return pid;
}

}  // namespace runledger::worker
