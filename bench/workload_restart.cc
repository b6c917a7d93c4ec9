// Workload restart: a data folder with N events, left as by a server that
// was killed (the last periodic snapshot, then the tail after it, and the
// WAL RocksDB had not flushed), is served by a new runledgerd process: the
// time from its start to its first answer of /v1/health is the time to
// ready. A new process, because a restart is one: opening the store in the
// process that wrote the log reused memory it had already touched and took
// half the time (docs/performance.md, "Where the time goes").
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "bench/child_process.h"
#include "bench/crash_store.h"
#include "bench/data_folder.h"
#include "bench/log_generator.h"
#include "bench/machine.h"
#include "bench/w1_checks.h"

namespace runledger::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kReadyWait = std::chrono::minutes(5);
constexpr auto kPollEvery = std::chrono::milliseconds(1);

double seconds_since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

// The server's own account of its start, from its log lines
// (tools/runledgerd.cc): the store's opening, the fold, the snapshot.
void read_start_log(const std::string& path, BenchResult& r) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch m;
  if (std::regex_search(text, m, std::regex(R"(opened the store in ([0-9.]+) s)"))) {
    r.figures["store_open_seconds"] = std::stod(m[1]);
  }
  if (std::regex_search(
          text, m,
          std::regex(R"(replayed ([0-9]+) events in ([0-9.]+) s \(snapshot at seq ([0-9]+)\))"))) {
    r.figures["state_load_seconds"] = std::stod(m[2]);
    r.figures["snapshot_seq"] = std::stoull(m[3]);
    r.figures["tail_events"] = std::stoull(m[1]);
  }
}

// Polls /v1/health until it answers; its last_seq, or nothing once the
// server exited (`*exited`, reaped) or kReadyWait passed.
std::optional<uint64_t> wait_ready(pid_t server, int port, bool* exited, std::string* why) {
  const auto deadline = SteadyClock::now() + kReadyWait;
  while (SteadyClock::now() < deadline) {
    int status = 0;
    if (::waitpid(server, &status, WNOHANG) == server) {
      *exited = true;
      *why = fmt::format("runledgerd exited ({}) before it served", status);
      return std::nullopt;
    }
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(kReadyWait));
    if (auto res = c.Get("/v1/health"); res && res->status == 200) {
      auto j = nlohmann::json::parse(res->body, nullptr, false);
      if (j.is_object() && j.contains("last_seq")) return j["last_seq"].get<uint64_t>();
      *why = "/v1/health answered without last_seq: " + res->body;
      return std::nullopt;
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  *why = "runledgerd did not serve within 5 minutes";
  return std::nullopt;
}

void time_restart(const std::string& dir, const GeneratedLog& g, BenchResult& r) {
  const std::string server_log = dir + ".restart.log";
  const int port = free_loopback_port();
  const auto start = SteadyClock::now();
  const pid_t server = spawn(
      {self_dir() + "/runledgerd", "--data", dir, "--listen", "127.0.0.1:" + std::to_string(port)},
      "/dev/null", server_log);
  if (server < 0) {
    r.error = "cannot start runledgerd";
    return;
  }
  std::string why;
  bool exited = false;
  const std::optional<uint64_t> served_seq = wait_ready(server, port, &exited, &why);
  r.seconds = seconds_since(start);
  int status = 0;
  if (!exited) {
    r.figures["server_peak_rss_bytes"] = peak_rss_bytes_of(server);
    ::kill(server, SIGTERM);
    ::waitpid(server, &status, 0);
  }
  read_start_log(server_log, r);
  std::error_code ec;
  std::filesystem::remove(server_log, ec);
  if (!served_seq) {
    r.error = why;
    return;
  }
  const uint64_t expected = g.plan.jobs * kW1EventsPerJob;
  r.events = expected;
  r.count = expected;
  r.checks["served_seq"] = *served_seq;
  r.checks["events_expected"] = expected;
  r.expect(*served_seq == expected,
           fmt::format("the server serves seq {}, expected {}", *served_seq, expected));
  r.expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           fmt::format("runledgerd did not stop cleanly on SIGTERM (status {})", status));
  const uint64_t snapshot = r.figures.value("snapshot_seq", uint64_t{0});
  const uint64_t tail = r.figures.value("tail_events", uint64_t{0});
  r.expect(
      r.figures.contains("tail_events") && snapshot + tail == expected,
      fmt::format("snapshot at {} plus {} tail events do not make {}", snapshot, tail, expected));
}

}  // namespace

BenchResult run_restart(const BenchOptions& o) {
  BenchResult r;
  r.workload = "restart";
  r.unit = "events";
  r.latency_of = "";
  r.parameters = {{"events", o.events}, {"callers", o.callers}};
  DataFolder folder(o.data);
  if (!folder.error().empty()) {
    r.error = folder.error();
    finish(r);
    return r;
  }
  CrashStore* crash = nullptr;
  auto wrap = [&crash](std::unique_ptr<EventStore> rocks) {
    auto s = std::make_shared<CrashStore>(std::move(rocks));
    crash = s.get();
    return std::shared_ptr<EventStore>(s);
  };
  GeneratedLog g = generate_w1_log(folder.path(), o.events, o.callers, o.progress, r, wrap,
                                   [&crash] { crash->crash(); });
  r.figures["generate_seconds"] = g.seconds;
  if (r.ok()) time_restart(folder.path(), g, r);
  r.disk_bytes = folder_bytes(folder.path());
  r.rss_bytes = current_rss_bytes();
  finish(r);
  return r;
}

}  // namespace runledger::bench
