// CrashDriver: see crash_driver.h.
#include "tests/faults/crash_driver.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "tests/support/subprocess.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

// Snapshots often, so kills also land while one is written and restarts
// load snapshot + tail; retries wait no backoff, so a retried job is
// claimable at once.
const std::vector<std::string>& server_flags() {
  static const std::vector<std::string> flags = {"--snapshot-every-events", "1000",
                                                 "--retry-backoff-s", "0"};
  return flags;
}

std::string path_of(const std::string& stream) {
  const auto slash = stream.find('/');
  const std::string kind = stream.substr(0, slash);
  return (kind == "job" ? "/v1/jobs/" : "/v1/connectors/") + stream.substr(slash + 1);
}

}  // namespace

uint64_t crash_seed_from_env() {
  return env_number("RUNLEDGER_CRASH_SEED",
                    std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32));
}

int crash_cycles_from_env(int fallback) {
  return static_cast<int>(env_number("RUNLEDGER_CRASH_CYCLES", static_cast<uint64_t>(fallback)));
}

int crash_full_check_every_from_env(int fallback) {
  return std::max(1, static_cast<int>(env_number("RUNLEDGER_CRASH_FULL_CHECK_EVERY",
                                                 static_cast<uint64_t>(fallback))));
}

std::string CrashReport::summary() const {
  return "seed " + std::to_string(seed) + ": " + std::to_string(cycles) + " cycles, " +
         std::to_string(kills) + " kills (" + std::to_string(kills_at_start) +
         " during start-up), " + std::to_string(commands.sent) + " requests, " +
         std::to_string(commands.acked) + " commands acknowledged, " +
         std::to_string(commands.unknown) + " left unanswered by a kill (" +
         std::to_string(commands.resent) + " answered when resent, " +
         std::to_string(commands.applied) + " of them found applied before the kill), " +
         std::to_string(commands.nothing) + " empty claims, " + std::to_string(events) +
         " events in the log, " + std::to_string(problems.size()) + " problems";
}

CrashDriver::CrashDriver(CrashOptions options) : options_(options), rng_(options.seed) {
  report_.seed = options.seed;
  for (int i = 0; i < options_.job_workers; ++i) {
    clients_.push_back(std::make_unique<JobWorker>(i, rng_()));
  }
  for (int i = 0; i < options_.connector_clients; ++i) {
    clients_.push_back(std::make_unique<ConnectorClient>(i, rng_()));
  }
  acks_checked_.assign(clients_.size(), 0);
}

CrashReport CrashDriver::run() {
  if (!start_server()) return report_;
  for (int cycle = 1; cycle <= options_.cycles; ++cycle) {
    load_then_kill();
    if (!start_server()) break;
    report_.cycles = cycle;
    check_after_restart(cycle);
    if (report_.problems.size() >= kProblemsMax) break;
  }
  for (const auto& c : clients_) {
    const ClientStats& s = c->stats();
    report_.commands.sent += s.sent;
    report_.commands.acked += s.acked;
    report_.commands.unknown += s.unknown;
    report_.commands.resent += s.resent;
    report_.commands.applied += s.applied;
    report_.commands.nothing += s.nothing;
  }
  report_.events = seen_.last_seq();
  if (server_ && server_->running()) {
    const int code = server_->terminate();
    if (code != 0) add_problems(report_.cycles, {"SIGTERM exit code " + std::to_string(code)});
  }
  if (problems_dropped_ > 0) {
    report_.problems.push_back("... and " + std::to_string(problems_dropped_) + " more");
  }
  return report_;
}

// Starts the server on the data folder; in some cycles kills it first while
// it replays, which the next start must survive as well.
bool CrashDriver::start_server() {
  const bool kill_at_start = server_ != nullptr && std::uniform_int_distribution<int>(1, 100)(
                                                       rng_) <= options_.kill_at_start_percent;
  if (kill_at_start) {
    server_ = std::make_unique<ServerProcess>(data_.path(), server_flags());
    std::this_thread::sleep_for(std::chrono::milliseconds(
        std::uniform_int_distribution<int64_t>(0, options_.kill_at_start_max.count())(rng_)));
    server_->kill_hard();
    ++report_.kills;
    ++report_.kills_at_start;
  }
  server_ = std::make_unique<ServerProcess>(data_.path(), server_flags());
  if (server_->wait_ready()) return true;
  add_problems(report_.cycles + 1, {"the server did not start again: " + server_->log()});
  return false;
}

void CrashDriver::load_then_kill() {
  std::atomic<bool> stop{false}, killed{false};
  const auto load = std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(
      options_.load_min.count(), options_.load_max.count())(rng_));
  std::vector<std::thread> threads;
  for (auto& c : clients_) {
    threads.emplace_back(
        [&c, &stop, &killed, port = server_->port()] { c->run(port, stop, killed); });
  }
  std::this_thread::sleep_for(load);
  killed = true;
  server_->kill_hard();
  ++report_.kills;
  for (auto& t : threads) t.join();
}

void CrashDriver::check_after_restart(int cycle) {
  const bool full = cycle % options_.full_check_every == 0 || cycle == options_.cycles;
  ApiClient api(server_->port());
  Problems found;
  // The window starts where the check before the last one had seen: a
  // command the last kill left unanswered, acknowledged now that it was sent
  // again, was written after that.
  LogWindow log(window_after_, api.events_after(window_after_));
  check_prefix_kept(seen_, log, &found);
  check_gapless(seen_, log, &found);
  check_commands_whole(seen_, log, &found);
  for (size_t i = 0; i < clients_.size(); ++i) {
    check_new_acks(api, log, i, &found);
    check_served_views(api, *clients_[i], full, &found);
    for (auto& p : clients_[i]->take_problems()) found.push_back(std::move(p));
  }
  if (full) check_with_tools(&found);
  window_after_ = seen_.last_seq();
  seen_.add(log);
  add_problems(cycle, found);
}

// The acks of a client since the last check. An ack the window does not
// reach back to (a command sent again across several kills) is checked
// against its stream's own events.
void CrashDriver::check_new_acks(ApiClient& api, const LogWindow& log, size_t client,
                                 Problems* problems) {
  const std::vector<Ack>& acks = clients_[client]->acks();
  std::vector<Ack> in_window;
  std::map<std::string, std::vector<Ack>> older;  // by stream
  for (size_t i = acks_checked_[client]; i < acks.size(); ++i) {
    if (log.covers(acks[i].stream, acks[i].version)) {
      in_window.push_back(acks[i]);
    } else {
      older[acks[i].stream].push_back(acks[i]);
    }
  }
  acks_checked_[client] = acks.size();
  check_acks_in_log(log, in_window, problems);
  for (const auto& [stream, stream_acks] : older) {
    ApiReply r = api.get(path_of(stream) + "/events");
    if (r.status != 200 || !r.json.is_object()) {
      problems->push_back(stream + "'s events: " + std::to_string(r.status) + " " + r.body);
      continue;
    }
    check_acks_in_log(LogWindow(0, r.json.at("events").get<std::vector<json>>()), stream_acks,
                      problems);
  }
}

// Each entity is served at the state its client last saw acknowledged, or
// later by at most the one command the client had in flight: those it
// acknowledged since the last check, or `all` it ever did.
void CrashDriver::check_served_views(ApiClient& api, CrashClient& client, bool all,
                                     Problems* problems) {
  const std::set<std::string> touched = client.take_touched();
  const auto& pending = client.unanswered();
  for (const auto& [stream, acked] : client.views()) {
    if (!all && touched.count(stream) == 0) continue;
    ApiReply r = api.get(path_of(stream));
    const uint64_t acked_v = acked.value("version", uint64_t{0});
    const uint64_t served_v = r.json.is_object() ? r.json.value("version", uint64_t{0}) : 0;
    const std::string said = stream + " acknowledged at version " + std::to_string(acked_v) +
                             ", served at " + std::to_string(served_v);
    const bool in_flight = pending && pending->stream == stream;
    if (r.status != 200 || served_v < acked_v) {
      problems->push_back(said + ": " + std::to_string(r.status) + " " + r.body);
    } else if (served_v == acked_v && r.json != acked) {
      problems->push_back(said + " but differs: " + json::diff(acked, r.json).dump());
    } else if (served_v > acked_v && (!in_flight || served_v - acked_v > kEventsPerCommandMax)) {
      problems->push_back(said + (in_flight ? ": more than one command ahead"
                                            : " with no command of its client in flight"));
    }
  }
  if (!pending) return;
  ApiReply r = api.get(path_of(pending->stream));
  const uint64_t served_v = r.status == 200 ? r.json.value("version", uint64_t{0}) : 0;
  if (r.status != 200 && r.status != 404) {
    problems->push_back(pending->stream + ": " + std::to_string(r.status) + " " + r.body);
  }
  client.observed_after_restart(served_v);
}

// The CLI opens the live server's folder as a secondary instance; the
// clients are paused, so the log does not move under it.
void CrashDriver::check_with_tools(Problems* problems) {
  CliResult verify = run_cli({"verify", "--data", data_.path()});
  if (verify.code != 0) {
    problems->push_back("verify exit " + std::to_string(verify.code) + ": " + verify.out +
                        verify.err);
  }
  CliResult compare = run_cli({"replay", "--data", data_.path(), "--compare"});
  if (compare.code != 0 || compare.err.find("no difference") == std::string::npos) {
    problems->push_back("replay --compare exit " + std::to_string(compare.code) + ": " +
                        compare.out + compare.err);
  }
}

void CrashDriver::add_problems(int cycle, const Problems& found) {
  for (const auto& p : found) {
    if (report_.problems.size() < kProblemsMax) {
      report_.problems.push_back("cycle " + std::to_string(cycle) + ": " + p);
    } else {
      ++problems_dropped_;
    }
  }
}

}  // namespace runledger::testing
