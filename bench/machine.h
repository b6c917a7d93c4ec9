// What a benchmark ran on and what it cost the process: the machine (CPU
// model and count, memory, kernel), resident memory now and at its peak,
// and the bytes a data folder holds on disk. Linux only (/proc).
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace runledger::bench {

// {"cpu_model", "cpus", "memory_bytes", "kernel", "arch", "allocator"}, the
// last "tcmalloc" or "system" (see CMakeLists.txt).
nlohmann::ordered_json machine_info();
// One line for the table, e.g.
// "2 x Intel Xeon ..., 23.4 GiB, Linux 6.1.0 x86_64, malloc: tcmalloc".
std::string machine_line(const nlohmann::ordered_json& machine);

uint64_t peak_rss_bytes();
// CPU time (user + system) the process has used, all threads: on a shared
// machine, whose speed varies by the hour, what a run costs varies less
// than how fast it goes.
double process_cpu_seconds();
uint64_t current_rss_bytes();
// Sum of the sizes of the regular files under `dir` (0 when it is missing).
uint64_t folder_bytes(const std::string& dir);

}  // namespace runledger::bench
