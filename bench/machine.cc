// Machine facts and process costs: see machine.h.
#include "bench/machine.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/free_memory.h"

namespace runledger::bench {
namespace {

constexpr uint64_t kKibBytes = 1024;
constexpr double kGibBytes = 1024.0 * 1024.0 * 1024.0;

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The value after "key:" on the lines of a /proc file that start with key.
std::vector<std::string> proc_values(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos || trimmed(line.substr(0, colon)) != key) continue;
    out.push_back(trimmed(line.substr(colon + 1)));
  }
  return out;
}

}  // namespace

nlohmann::ordered_json machine_info() {
  nlohmann::ordered_json m;
  auto models = proc_values("/proc/cpuinfo", "model name");
  m["cpu_model"] = models.empty() ? "unknown" : models.front();
  m["cpus"] = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t mem_kib = 0;
  auto total = proc_values("/proc/meminfo", "MemTotal");
  if (!total.empty()) std::istringstream(total.front()) >> mem_kib;
  m["memory_bytes"] = mem_kib * kKibBytes;
  utsname u{};
  if (uname(&u) == 0) {
    m["kernel"] = fmt::format("{} {}", u.sysname, u.release);
    m["arch"] = u.machine;
  }
  // The binary links tcmalloc or not (CMake's RUNLEDGER_ALLOCATOR); it
  // changes CPU-bound figures by a quarter or more, so a result says which.
  m["allocator"] = tcmalloc_linked() ? "tcmalloc" : "system";
  return m;
}

std::string machine_line(const nlohmann::ordered_json& m) {
  return fmt::format("{} x {}, {:.1f} GiB, {} {}, malloc: {}", m.value("cpus", 0L),
                     m.value("cpu_model", std::string("?")),
                     static_cast<double>(m.value("memory_bytes", uint64_t{0})) / kGibBytes,
                     m.value("kernel", std::string("?")), m.value("arch", std::string("")),
                     m.value("allocator", std::string("?")));
}

uint64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * kKibBytes;  // Linux reports KiB
}

double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

uint64_t current_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size_pages = 0, resident_pages = 0;
  in >> size_pages >> resident_pages;
  return resident_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t folder_bytes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  uint64_t total = 0;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      uint64_t n = it->file_size(size_ec);
      if (!size_ec) total += n;
    }
  }
  return total;
}

}  // namespace runledger::bench
