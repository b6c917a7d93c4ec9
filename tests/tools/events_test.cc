// runledger events: the log as JSON Lines in the API's event JSON, filtered
// by stream, type, seq range and time range.
#include <gtest/gtest.h>

#include "base/time_text.h"
#include "events/event_codec.h"
#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

std::vector<json> events_of(const CliResult& r) {
  std::vector<json> out;
  for (const auto& line : lines_of(r.out)) out.push_back(json::parse(line));
  return out;
}

// j1 enqueued and claimed, j2 enqueued, j1 started: 4 events, 1 s apart.
class Events : public ::testing::Test {
 protected:
  void SetUp() override {
    rig_.run(enqueue("j1", "t1"));
    rig_.run(claim("j1", "w1", "token-1"));
    second_ms_ = rig_.clock().now_ms();
    rig_.run(enqueue("j2", "t2"));
    rig_.run(jobs::Start{"j1", "token-1", "exec-1"});
  }
  CliResult events(std::vector<std::string> args) {
    args.insert(args.begin(), {"events", "--data", rig_.data()});
    return run_cli(args);
  }
  EngineRig rig_;
  int64_t second_ms_ = 0;
};

TEST_F(Events, EveryEventInOrderAsTheApiShowsIt) {
  CliResult r = events({});
  ASSERT_EQ(r.code, 0) << r.err;
  auto all = events_of(r);
  ASSERT_EQ(all.size(), 4u);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].at("seq"), i + 1);
  EXPECT_EQ(all[1].at("type"), "JobLeased");
  EXPECT_EQ(all[1].at("stream"), "job/j1");
  EXPECT_EQ(all[1].at("version"), 2);
  EXPECT_EQ(all[1].at("actor"), "tester");
  EXPECT_EQ(all[1].at("recorded_at"), format_time_ms(second_ms_));
  EXPECT_EQ(all[1].at("data").at("worker"), "w1");
  EXPECT_FALSE(all[1].at("command_id").get<std::string>().empty());
}

TEST_F(Events, FilteredByStream) {
  auto got = events_of(events({"--stream", "job/j1"}));
  ASSERT_EQ(got.size(), 3u);
  for (const auto& e : got) EXPECT_EQ(e.at("stream"), "job/j1");
}

TEST_F(Events, FilteredByType) {
  auto got = events_of(events({"--type", "JobEnqueued"}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].at("stream"), "job/j1");
  EXPECT_EQ(got[1].at("stream"), "job/j2");
}

TEST_F(Events, FilteredBySeqRange) {
  auto got = events_of(events({"--from-seq", "2", "--to-seq", "3"}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].at("seq"), 2);
  EXPECT_EQ(got[1].at("seq"), 3);
}

TEST_F(Events, FilteredByTimeRange) {
  auto got = events_of(events({"--since", format_time_ms(second_ms_), "--until",
                               format_time_ms(second_ms_ + EngineRig::kStepMs)}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].at("seq"), 2);
  EXPECT_EQ(got[1].at("seq"), 3);
}

TEST_F(Events, AnUnknownTypeIsABadArgument) {
  CliResult r = events({"--type", "JobExploded"});
  EXPECT_EQ(r.code, 64);
  EXPECT_NE(r.err.find("JobExploded"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace runledger::testing
