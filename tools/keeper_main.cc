// runledger-keeper: the keeper of a `runledger work` attempt, started by the
// runner (worker/keeper.h), never by hand. A program of its own so that it
// shares no memory with its runner: a fork would copy the runner's pages as
// either side writes them, on the path from a claim to its step's exec.
//
//   runledger-keeper --runner PID --notify-fd FD --folder-fd FD --grace-ms MS
//                    --keeper bound|detached (--folder DIR | --spare-for STATE_DIR)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "worker/keeper.h"

namespace {

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "runledger-keeper: %s (it is started by runledger work)\n", why);
  std::exit(64);
}

long number(const char* text) {
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (end == text || *end != '\0') usage("a number was expected");
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  runledger::worker::KeeperSetup s;
  bool has_folder = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--runner") {
      s.runner = static_cast<pid_t>(number(value));
    } else if (flag == "--notify-fd") {
      s.notify_fd = static_cast<int>(number(value));
    } else if (flag == "--folder-fd") {
      s.folder_fd = static_cast<int>(number(value));
    } else if (flag == "--grace-ms") {
      s.grace = std::chrono::milliseconds(number(value));
    } else if (flag == "--keeper") {
      s.detached = std::string(value) == "detached";
    } else if (flag == "--folder") {
      s.dir = value;
      has_folder = true;
    } else if (flag == "--spare-for") {
      has_folder = true;  // named for ps; the folder comes on --folder-fd
    } else {
      usage("unknown flag");
    }
  }
  if (s.runner <= 0 || s.notify_fd < 0 || !has_folder || (s.dir.empty() && s.folder_fd < 0)) {
    usage("missing flags");
  }
  runledger::worker::run_keeper_process(s);
}
