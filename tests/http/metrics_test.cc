// GET /metrics (docs/api.md, Operations: "Prometheus text format: at least
// commands by type and outcome, command latency histogram, events appended,
// fsync batches and batch size, current jobs by state, connectors by status,
// open holds, lease expiries"), end to end. Jobs by state count finished
// jobs too, which have left memory for the store, also after a restart.
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

class MetricsTest : public ServerTest {
 protected:
  // Every sample of the exposition: "name{labels}" -> value.
  std::map<std::string, double> samples() {
    ApiReply r = client().get("/metrics");
    EXPECT_EQ(r.status, 200) << r.body;
    std::map<std::string, double> out;
    std::istringstream lines(r.body);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] == '#') continue;
      const auto space = line.rfind(' ');
      if (space == std::string::npos) continue;
      out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
    return out;
  }
  static double jobs(const std::map<std::string, double>& m, const std::string& state) {
    auto it = m.find("runledger_jobs{state=\"" + state + "\"}");
    return it == m.end() ? -1 : it->second;
  }
};

TEST_F(MetricsTest, EveryFigureOfTheContractIsThereAndJobsByStateCountFinishedJobs) {
  // Given one job queued, one cancelled, one run to success
  ASSERT_TRUE(IsStatus(enqueue(client(), "queued", "t1", "k-queued"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "cancelled", "t2", "k-cancelled"), 201));
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/cancelled/cancel", json::object()), 202));
  ASSERT_TRUE(IsStatus(enqueue(client(), "done", "t3", "k-done"), 201));
  ApiReply c = claim(client(), "w", "k-done");
  ASSERT_TRUE(IsStatus(c, 200));
  ASSERT_TRUE(IsStatus(worker_call(client(), "done", "start", token_of(c)), 200));
  ASSERT_EQ(run_steps(client(), "done", token_of(c), kDefaultPlan).json.value("state", ""),
            "SUCCEEDED");
  // and a connector, and an open hold
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "drive"}}), 201));
  ASSERT_TRUE(IsStatus(client().post("/v1/holds", {{"target", "t9"},
                                                   {"kind", "EXECUTION_STATE_UNKNOWN"},
                                                   {"reason", "a script may still write"}}),
                       201));

  for (int pass = 0; pass < 2; ++pass) {  // as served, then after a restart
    auto m = samples();
    EXPECT_EQ(jobs(m, "QUEUED"), 1) << "pass " << pass;
    EXPECT_EQ(jobs(m, "CANCELLED"), 1) << "pass " << pass;
    EXPECT_EQ(jobs(m, "SUCCEEDED"), 1) << "pass " << pass;
    EXPECT_EQ(jobs(m, "FAILED"), 0) << "pass " << pass;
    EXPECT_EQ(jobs(m, "RUNNING"), 0) << "pass " << pass;
    EXPECT_EQ(m["runledger_connectors{status=\"active\"}"], 1);
    EXPECT_EQ(m["runledger_open_holds{kind=\"EXECUTION_STATE_UNKNOWN\"}"], 1);
    EXPECT_TRUE(m.count("runledger_lease_expiries_total"));
    if (pass == 0) {
      EXPECT_GE(m["runledger_commands_total{type=\"job.enqueue\",outcome=\"ok\"}"], 3);
      EXPECT_GE(m["runledger_events_appended_total"], 15);
      EXPECT_GE(m["runledger_fsync_batches_total"], 1);
      EXPECT_GE(m["runledger_command_latency_seconds_count"], 15);
      EXPECT_TRUE(m.count("runledger_command_latency_seconds_bucket{le=\"+Inf\"}"));
      EXPECT_TRUE(m.count("runledger_batch_commands_bucket{le=\"+Inf\"}"));
    }
    restart();
  }
}

TEST_F(MetricsTest, EverySampleBelongsToAFamilyWithHelpAndType) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j", "t", "k"), 201));
  ApiReply r = client().get("/metrics");
  ASSERT_EQ(r.status, 200) << r.body;
  std::map<std::string, std::string> type_of;  // family -> counter, gauge, histogram
  std::map<std::string, int> helps;
  std::istringstream lines(r.body);
  std::vector<std::string> sample_names;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string hash, keyword, name, type;
    if (line.rfind("# HELP ", 0) == 0) {
      words >> hash >> keyword >> name;
      ++helps[name];
    } else if (line.rfind("# TYPE ", 0) == 0) {
      words >> hash >> keyword >> name >> type;
      EXPECT_TRUE(type_of.emplace(name, type).second) << "two TYPE lines for " << name;
    } else if (!line.empty()) {
      sample_names.push_back(line.substr(0, line.find_first_of("{ ")));
    }
  }
  ASSERT_FALSE(sample_names.empty());
  for (const std::string& sample : sample_names) {
    std::string family = sample;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (!type_of.count(family) && sample.size() > s.size() &&
          sample.compare(sample.size() - s.size(), s.size(), s) == 0 &&
          type_of.count(sample.substr(0, sample.size() - s.size())) &&
          type_of[sample.substr(0, sample.size() - s.size())] == "histogram") {
        family = sample.substr(0, sample.size() - s.size());
      }
    }
    EXPECT_TRUE(type_of.count(family)) << sample << " has no TYPE line";
    EXPECT_EQ(helps[family], 1) << sample << " needs exactly one HELP line";
  }
  EXPECT_TRUE(type_of.count("runledger_writer_hand_overs_total"));
}

TEST_F(MetricsTest, ARerunTakesAFinishedJobOutOfItsStateCount) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j", "t", "k"), 201));
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/j/cancel", json::object()), 202));
  EXPECT_EQ(jobs(samples(), "CANCELLED"), 1);
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/j/rerun", json::object()), 201));
  auto m = samples();
  EXPECT_EQ(jobs(m, "CANCELLED"), 0);
  EXPECT_EQ(jobs(m, "QUEUED"), 1);
}

}  // namespace
}  // namespace runledger::testing
