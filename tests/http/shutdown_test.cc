// SIGTERM under load (docs/operations.md: "SIGINT/SIGTERM: stop accepting, finish
// commands in flight, flush, exit 0"): every command that runs is answered.
// Clients enqueue jobs as fast as they can while the server is stopped;
// afterwards the log holds exactly the jobs whose enqueue got a 201: none
// that a client never heard of (a command taken while the stop waited, and
// committed by the engine's last batch after the event loop had stopped),
// none acknowledged and missing.
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"
#include "tests/support/subprocess.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr int kClientsDuringStop = 16;
constexpr int kRounds = 3;
constexpr auto kLoadBeforeStop = std::chrono::milliseconds(700);

class ShutdownTest : public ServerTest {};

// The ids of the jobs the log of `data` holds.
std::set<std::string> enqueued_in_log(const std::string& data) {
  CliResult r = run_cli({"events", "--data", data, "--type", "JobEnqueued"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::set<std::string> ids;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line, nullptr, false);
    const std::string stream = e.is_object() ? e.value("stream", "") : "";
    if (stream.rfind("job/", 0) == 0) ids.insert(stream.substr(4));
  }
  return ids;
}

TEST_F(ShutdownTest, EveryCommandThatRunsDuringAStopIsAnswered) {
  std::set<std::string> acked;
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      ASSERT_NO_FATAL_FAILURE(start({}));
    }
    std::mutex mu;
    std::atomic<bool> stopped{false};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClientsDuringStop; ++c) {
      clients.emplace_back([&, c, port = server().port()] {
        ApiClient client(port);
        for (int i = 0; !stopped; ++i) {
          const std::string id =
              "r" + std::to_string(round) + "-c" + std::to_string(c) + "-" + std::to_string(i);
          ApiReply r = enqueue(client, id, "t-" + id, "k");
          if (r.status == 201) {
            std::lock_guard<std::mutex> lk(mu);
            acked.insert(id);
          } else if (r.status == 0) {
            // the server is gone; a new connection may still find it stopping
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        }
      });
    }
    std::this_thread::sleep_for(kLoadBeforeStop);
    EXPECT_EQ(server().terminate(), 0) << server().log();
    stopped = true;
    for (auto& t : clients) t.join();
  }
  const std::set<std::string> logged = enqueued_in_log(data());
  ASSERT_FALSE(acked.empty());
  std::vector<std::string> unanswered;
  for (const auto& id : logged) {
    if (!acked.count(id)) unanswered.push_back(id);
  }
  std::vector<std::string> lost;
  for (const auto& id : acked) {
    if (!logged.count(id)) lost.push_back(id);
  }
  EXPECT_EQ(unanswered, std::vector<std::string>{}) << "committed, but never answered";
  EXPECT_EQ(lost, std::vector<std::string>{}) << "answered 201, but not in the log";
}

}  // namespace
}  // namespace runledger::testing
