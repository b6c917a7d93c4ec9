#include "worker/journal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace runledger::worker {
namespace {

// The file's bytes, read with plain system calls: the keeper reads a
// request with it on the way to a step's exec, where an iostream's first
// use costs more than the read. nullopt when it cannot be opened.
std::optional<std::string> file_bytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string whole_file(const std::string& path) { return file_bytes(path).value_or(""); }

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

void sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// The fields of /proc/<pid>/stat after the command's closing parenthesis:
// field 3 (state) first.
std::vector<std::string> stat_fields(pid_t pid) {
  const std::string stat = whole_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos || close + 2 > stat.size()) return fields;
  std::istringstream rest(stat.substr(close + 2));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

}  // namespace

namespace {

Status write_json(const std::string& path, const nlohmann::json& value, bool sync) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot write " + tmp + ": " + std::strerror(errno));
  const std::string text = value.dump();
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return Status::IoError("cannot write " + tmp + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = !sync || ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return Status::IoError("cannot fsync " + tmp + ": " + std::strerror(errno));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IoError("cannot rename " + tmp + ": " + std::strerror(errno));
  }
  if (sync) sync_folder(folder_of(path));
  return Status::Ok();
}

}  // namespace

Status write_json_durably(const std::string& path, const nlohmann::json& value) {
  return write_json(path, value, /*sync=*/true);
}

Status write_json_whole(const std::string& path, const nlohmann::json& value) {
  return write_json(path, value, /*sync=*/false);
}

Status sync_written(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return Status::IoError("cannot fsync " + path + ": " + std::strerror(errno));
  sync_folder(folder_of(path));
  return Status::Ok();
}

void remove_file(const std::string& path) { ::unlink(path.c_str()); }

std::optional<nlohmann::json> read_json_file(const std::string& path) {
  const std::optional<std::string> bytes = file_bytes(path);
  if (!bytes) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*bytes, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::string boot_id() {
  std::string id = whole_file("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

std::string start_ticks(pid_t pid) {
  const std::vector<std::string> f = stat_fields(pid);
  return f.size() >= 20 ? f[19] : "";  // field 22, counted from field 3
}

bool process_running(pid_t pid) {
  const std::vector<std::string> f = stat_fields(pid);
  return !f.empty() && f[0] != "Z" && f[0] != "X";
}

ProcessId ProcessId::of(pid_t pid) { return {host_name(), boot_id(), pid, start_ticks(pid)}; }

nlohmann::json ProcessId::to_json() const {
  return {{"host", host}, {"boot", boot}, {"pid", pid}, {"start", start}};
}

ProcessId ProcessId::from_json(const nlohmann::json& j) {
  ProcessId p;
  if (!j.is_object()) return p;
  p.host = j.value("host", "");
  p.boot = j.value("boot", "");
  p.pid = j.value("pid", 0);
  p.start = j.value("start", "");
  return p;
}

std::string ProcessId::handle() const {
  return host + "/" + boot + "/" + std::to_string(pid) + "/" + start;
}

bool ProcessId::this_boot() const { return host == host_name() && boot == boot_id(); }

bool ProcessId::alive() const {
  return pid > 0 && this_boot() && start_ticks(pid) == start && process_running(pid);
}

}  // namespace runledger::worker
