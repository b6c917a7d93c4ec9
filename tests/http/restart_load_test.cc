// Restart under load (docs/performance.md "Reliability", one cycle): 8 clients run
// W1 (enqueue, claim, start, 4 steps of start + done) against a real server
// and record every acknowledged command; the server is SIGKILLed mid-load
// and restarted on the same folder. Every acknowledged command's effect is
// there, nothing unsent is, the log is gapless, and no command is half
// applied. Then SIGTERM exits 0.
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr int kClients = 8;
constexpr auto kLoadBeforeKill = std::chrono::seconds(3);
// W1's progress, one number per acknowledged command: enqueue 1, claim 2,
// start 3, step i start 4 + 2i and done 5 + 2i; the last done is 11.
constexpr int kEnqueued = 1;
constexpr int kSucceeded = 11;

// One job of one client: how far the server acknowledged it.
struct JobRecord {
  std::string id;
  int acked = 0;
};

struct ClientLog {
  std::vector<JobRecord> jobs;
  std::vector<std::string> unexpected;  // non-2xx replies while the server lived
};

// Runs W1 jobs one after the other until the server disappears or `stop`.
void run_w1(int port, int client_no, const std::atomic<bool>& stop, const std::atomic<bool>& killed,
            ClientLog* log) {
  ApiClient c(port);
  const std::string kind = "load-" + std::to_string(client_no);
  auto ok = [&](const ApiReply& r, int status) {
    if (r.status == status) return true;
    if (r.status != 0 || !killed) {
      log->unexpected.push_back(std::to_string(r.status) + " " + r.transport + " " + r.body);
    }
    return false;
  };
  for (int i = 0; !stop; ++i) {
    JobRecord& job = log->jobs.emplace_back();
    job.id = "w1-" + std::to_string(client_no) + "-" + std::to_string(i);
    if (!ok(enqueue(c, job.id, "target-" + job.id, kind), 201)) return;
    job.acked = kEnqueued;
    ApiReply claimed = claim(c, "worker-" + std::to_string(client_no), kind);
    if (!ok(claimed, 200)) return;
    job.acked = 2;
    const std::string token = token_of(claimed);
    if (!ok(worker_call(c, job.id, "start", token), 200)) return;
    job.acked = 3;
    for (size_t s = 0; s < kDefaultPlan.size(); ++s) {
      const std::string step = "steps/" + kDefaultPlan[s];
      if (!ok(worker_call(c, job.id, step + "/start", token), 200)) return;
      job.acked = 4 + 2 * static_cast<int>(s);
      if (!ok(worker_call(c, job.id, step + "/done", token), 200)) return;
      job.acked = 5 + 2 * static_cast<int>(s);
    }
  }
}

// The progress a job view shows, on the same scale as JobRecord::acked.
int progress_of(const json& job) {
  const std::string state = job.value("state", "");
  if (state == "QUEUED") return 1;
  if (state == "LEASED") return 2;
  if (state == "SUCCEEDED") return kSucceeded;
  if (state != "RUNNING") return -1;
  int p = 3;
  const auto& steps = job.at("steps");
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string s = steps[i].value("state", "");
    if (s == "RUNNING") p = 4 + 2 * static_cast<int>(i);
    if (s == "DONE") p = 5 + 2 * static_cast<int>(i);
  }
  return p;
}

// The event types W1 leaves in a job's stream after `progress` commands.
std::vector<std::string> w1_types(int progress) {
  std::vector<std::string> all = {"JobEnqueued", "JobLeased", "JobStarted"};
  for (size_t i = 0; i < kDefaultPlan.size(); ++i) {
    all.push_back("StepStarted");
    all.push_back("StepSucceeded");
  }
  all.push_back("AttemptSucceeded");  // in the same command as the last step's done
  if (progress == kSucceeded) return all;
  return {all.begin(), all.begin() + progress};
}

// The log is gapless from seq 1, each stream's versions count up from 1,
// and each stream in its order.
void expect_gapless(const std::vector<json>& events,
                    std::map<std::string, std::vector<std::string>>* types_by_stream) {
  std::map<std::string, uint64_t> versions;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    ASSERT_EQ(e.value("seq", uint64_t{0}), i + 1) << e.dump();
    const std::string stream = e.value("stream", "");
    EXPECT_EQ(e.value("version", uint64_t{0}), ++versions[stream]) << e.dump();
    (*types_by_stream)[stream].push_back(e.value("type", ""));
  }
}

using RestartLoadTest = ServerTest;

TEST_F(RestartLoadTest, EveryAcknowledgedCommandSurvivesASigkillMidLoad) {
  std::atomic<bool> stop{false}, killed{false};
  std::vector<ClientLog> logs(kClients);
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back(run_w1, server().port(), t, std::cref(stop), std::cref(killed), &logs[t]);
  }
  std::this_thread::sleep_for(kLoadBeforeKill);
  killed = true;
  server().kill_hard();
  stop = true;
  for (auto& t : clients) t.join();
  ASSERT_NO_FATAL_FAILURE(start({}));

  std::map<std::string, std::vector<std::string>> types_by_stream;
  ASSERT_NO_FATAL_FAILURE(expect_gapless(client().all_events(), &types_by_stream));
  int acked_commands = 0;
  for (int t = 0; t < kClients; ++t) {
    SCOPED_TRACE("client " + std::to_string(t));
    for (const auto& u : logs[t].unexpected) ADD_FAILURE() << "before the kill: " << u;
    EXPECT_FALSE(logs[t].jobs.empty() || logs[t].jobs.front().acked == 0)
        << "this client got nothing acknowledged before the kill";
    for (const auto& rec : logs[t].jobs) {
      acked_commands += rec.acked;
      const auto stream = types_by_stream.find("job/" + rec.id);
      if (rec.acked == 0 && stream == types_by_stream.end()) continue;  // never acknowledged
      ASSERT_NE(stream, types_by_stream.end()) << rec.id << " acknowledged but not in the log";
      const json view = job_view(client(), rec.id);
      const int seen = progress_of(view);
      SCOPED_TRACE(rec.id + " acknowledged " + std::to_string(rec.acked) + ", shows " +
                   std::to_string(seen) + ": " + view.dump());
      // At least what was acknowledged, at most the one command in flight.
      EXPECT_GE(seen, rec.acked);
      EXPECT_LE(seen, rec.acked + 1);
      ASSERT_GE(seen, kEnqueued);
      // Whole commands only: the stream is exactly W1's events up to there.
      EXPECT_EQ(stream->second, w1_types(seen));
    }
  }
  RecordProperty("acknowledged_commands", acked_commands);
  EXPECT_EQ(server().terminate(), 0) << server().log();
}

}  // namespace
}  // namespace runledger::testing
