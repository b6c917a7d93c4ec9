// Programs a benchmark starts as processes of their own (runledgerd, the
// runners of `runledger work`): found beside the running binary, given the
// caller's environment less RUNLEDGER_*, their output into files.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace runledger::bench {

// The folder of the running binary: build/bin, or /usr/bin once installed,
// where runledgerd and runledger sit side by side.
std::string self_dir();

// A loopback port nobody listened on a moment ago.
int free_loopback_port();

// Starts argv[0] (a path) with argv, stdin from /dev/null, stdout and stderr
// into the files `out` and `err`. -1 when it cannot be started.
pid_t spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err);

// utime + stime of `pid` so far, in seconds; 0 when it cannot be read.
double cpu_seconds(pid_t pid);

// The peak resident set of a running `pid` (VmHWM), in bytes; 0 when unknown.
uint64_t peak_rss_bytes_of(pid_t pid);

}  // namespace runledger::bench
