// The connector's transition table (projections/connector_commands.h) and its
// deciders agree: from every status and sync status, each operator command is
// accepted exactly when the table accepts it, and refused with the table's
// first refusal, naming what the table allows.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "projections/connector_commands.h"
#include "tests/projections/connector_testing.h"

namespace runledger::connectors {
namespace {

using testing::begin_deletion;
using testing::conn;
using testing::create;
using testing::create_in_error;
using testing::Given;
using testing::set_status;
using testing::start;

struct Case {
  std::string name;
  std::function<void(Given&)> build;
  Status status;
  SyncStatus sync;
};

std::vector<Case> every_state() {
  return {
      {"active idle", [](Given& g) { create(g); }, Status::kActive, SyncStatus::kIdle},
      {"active running",
       [](Given& g) {
         create(g);
         start(g, "s1");
       },
       Status::kActive, SyncStatus::kRunning},
      {"paused idle",
       [](Given& g) {
         create(g);
         set_status(g, "paused");
       },
       Status::kPaused, SyncStatus::kIdle},
      {"paused running",
       [](Given& g) {
         create(g);
         start(g, "s1");
         set_status(g, "paused");
       },
       Status::kPaused, SyncStatus::kRunning},
      {"error idle", [](Given& g) { create_in_error(g); }, Status::kError, SyncStatus::kIdle},
      {"error running",
       [](Given& g) {
         create_in_error(g);
         start(g, "s1");
       },
       Status::kError, SyncStatus::kRunning},
      {"deleting idle",
       [](Given& g) {
         create(g);
         begin_deletion(g);
       },
       Status::kDeleting, SyncStatus::kIdle},
      {"deleting running",
       [](Given& g) {
         create(g);
         start(g, "s1");
         begin_deletion(g);
       },
       Status::kDeleting, SyncStatus::kRunning},
  };
}

const std::map<std::string_view, std::function<Decision(Given&)>>& commands() {
  static const std::map<std::string_view, std::function<Decision(Given&)>> sent = {
      {kCmdUpdate,
       [](Given& g) {
         Update u;
         u.id = "c1";
         u.name = "Renamed";
         return g.run(u);
       }},
      {kCmdSync,
       [](Given& g) {
         return g.run(StartSync{"c1", "s-new"});
       }},
      {kCmdAbort, [](Given& g) { return g.run(AbortSync{"c1"}); }},
      {kCmdDelete, [](Given& g) { return g.run(Delete{"c1"}); }},
  };
  return sent;
}

TEST(ConnectorTable, EachStateRefusesExactlyWhatTheTableRefusesWithItsCodeAndSentence) {
  ASSERT_EQ(commands().size(), std::size(kCommandGates)) << "a command of the table is not sent";
  size_t refused = 0, accepted = 0;
  for (const Case& state : every_state()) {
    for (const auto& [command, send] : commands()) {
      SCOPED_TRACE(state.name + ", " + std::string(command));
      Given g;
      state.build(g);
      const Connector before = conn(g);
      ASSERT_EQ(before.status, state.status);
      ASSERT_EQ(before.sync_status, state.sync);
      const Refusal* refusal = refusal_of(before, command);
      const Decision d = send(g);
      if (refusal == nullptr) {
        ++accepted;
        EXPECT_FALSE(d.rejection.has_value()) << d.rejection->message;
        EXPECT_FALSE(d.events.empty());
        continue;
      }
      ++refused;
      ASSERT_TRUE(d.rejection.has_value()) << "the decider took what the table refuses";
      EXPECT_EQ(d.rejection->code, refusal->code);
      EXPECT_EQ(d.rejection->message, refusal->message);
      EXPECT_TRUE(d.events.empty());
      nlohmann::json allowed = nlohmann::json::array();
      for (std::string_view c : allowed_commands(before)) allowed.push_back(c);
      EXPECT_EQ(d.rejection->extra.at("allowed"), allowed);
      EXPECT_EQ(d.rejection->extra.at("state"), to_string(state.status));
    }
  }
  // Both halves of the table are exercised: 8 states by 4 commands.
  EXPECT_EQ(refused + accepted, 32u);
  EXPECT_GT(refused, 0u);
  EXPECT_GT(accepted, 0u);
}

TEST(ConnectorTable, AllowedListsTheCommandsInTheTablesOrder) {
  Connector c;
  EXPECT_EQ(allowed_commands(c), (std::vector<std::string_view>{"update", "sync", "delete"}));
  c.sync_status = SyncStatus::kRunning;
  EXPECT_EQ(allowed_commands(c), (std::vector<std::string_view>{"update", "abort"}));
  c.status = Status::kPaused;
  c.sync_status = SyncStatus::kIdle;
  EXPECT_EQ(allowed_commands(c), (std::vector<std::string_view>{"update", "delete"}));
  c.status = Status::kDeleting;
  EXPECT_TRUE(allowed_commands(c).empty());
}

}  // namespace
}  // namespace runledger::connectors
