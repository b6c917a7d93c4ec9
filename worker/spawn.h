// Starting a program the way posix_spawn does: the child shares the caller's
// memory (CLONE_VM | CLONE_VFORK) and the caller waits until it has exec'd.
// A fork copies the caller's page tables and then a copy of every page
// either side writes: milliseconds on a small machine, for a step and for a
// keeper alike. posix_spawn itself cannot set PR_SET_PDEATHSIG nor leave a
// chosen mask of blocked signals, which both need.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace runledger::worker {

struct SpawnSpec {
  // argv[0] is looked up in PATH when it holds no '/'.
  std::vector<std::string> argv;
  // The program's environment; nullptr: the caller's.
  const std::vector<std::string>* env = nullptr;
  // Its standard streams; -1: the caller's.
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  // Descriptors the program keeps (their close-on-exec flag cleared in it).
  std::vector<int> keep_fds;
  bool new_session = false;      // setsid(): it and what it starts can be signalled as one
  bool die_with_parent = false;  // PR_SET_PDEATHSIG SIGKILL, and not started if the caller died
  // The signals it starts with blocked; every disposition is the default.
  sigset_t blocked = empty_set();

  static sigset_t empty_set() {
    sigset_t s;
    sigemptyset(&s);
    return s;
  }
};

// The child's pid, or -1 (errno set) when it could not be created. A
// program that cannot be executed writes "cannot execute NAME: WHY" to its
// stderr and exits 127 (not found) or 126.
pid_t spawn_program(const SpawnSpec& spec);

}  // namespace runledger::worker
