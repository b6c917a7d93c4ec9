// Child processes of the benchmarks: see child_process.h.
#include "bench/child_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "worker/spawn.h"

extern char** environ;

namespace runledger::bench {

std::string self_dir() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path().string();
}

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "RUNLEDGER_", 10) != 0) env.emplace_back(*e);
  }
  const int in_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  pid_t pid = -1;
  if (in_fd >= 0 && out_fd >= 0 && err_fd >= 0) {
    // Without fork's copy of the caller's page tables, which a benchmark
    // that just filled its heap would otherwise count as the child's start.
    worker::SpawnSpec spec;
    spec.argv = argv;
    spec.env = &env;
    spec.stdin_fd = in_fd;
    spec.stdout_fd = out_fd;
    spec.stderr_fd = err_fd;
    pid = worker::spawn_program(spec);
  }
  for (int fd : {in_fd, out_fd, err_fd}) {
    if (fd >= 0) ::close(fd);
  }
  return pid;
}

double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::vector<std::string> f;
  for (std::string x; rest >> x;) f.push_back(x);
  if (f.size() < 13) return 0;
  return static_cast<double>(std::stoull(f[11]) + std::stoull(f[12])) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

uint64_t peak_rss_bytes_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // in kB
  }
  return 0;
}

}  // namespace runledger::bench
