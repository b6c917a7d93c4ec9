// Helpers for the connector model tests: short ways to put a connector in a
// given state through real commands (so every state is one the decider and
// fold can reach), and to read what a decision said.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "events/event_codec.h"
#include "events/event_json.h"
#include "http/rejection_status.h"
#include "projections/connector.h"
#include "projections/state.h"
#include "tests/projections/decider_testing.h"

namespace runledger::connectors::testing {

using runledger::testing::expect_refused_saying;
using runledger::testing::Given;
using runledger::testing::replay;

inline constexpr int64_t kMsPerS = 1000;

inline const Connector& conn(const Given& g, const std::string& id = "c1") {
  return g.state.connectors.by_id.at(id);
}

inline bool exists(const Given& g, const std::string& id = "c1") {
  return g.state.connectors.by_id.count(id) == 1;
}

// Runs a command that must be accepted; fails the test (not just the
// helper) when it is refused.
template <typename Cmd>
Decision accept(Given& g, const Cmd& c) {
  Decision d = g.run(c);
  EXPECT_FALSE(d.rejection.has_value())
      << "refused: "
      << (d.rejection ? std::string(code_name(d.rejection->code)) + " " + d.rejection->message
                      : "");
  return d;
}

inline void create(Given& g, const std::string& id = "c1", int64_t sync_schedule_s = 0) {
  accept(g, Create{id, "Connector " + id, sync_schedule_s});
}

inline void set_status(Given& g, const std::string& status, const std::string& id = "c1") {
  Update u;
  u.id = id;
  u.status = status;
  accept(g, u);
}

inline void start(Given& g, const std::string& sync_id, const std::string& id = "c1") {
  accept(g, StartSync{id, sync_id});
}

inline void fail_sync(Given& g, const std::string& sync_id, const std::string& error,
                      const std::string& id = "c1") {
  accept(g, ReportFailed{id, sync_id, error});
}

// A connector whose last sync failed: status error, last_error set, idle.
inline void create_in_error(Given& g, const std::string& id = "c1") {
  create(g, id);
  start(g, "s-fail", id);
  fail_sync(g, "s-fail", "source unreachable", id);
}

// Folds a ConnectorDeletionStarted alone: a delete whose cascade has not
// completed. The delete command itself erases the connector in the same
// decision, so this is the only way to hold a `deleting` connector.
inline void begin_deletion(Given& g, const std::string& id = "c1") {
  Decision d;
  d.emit(connector_stream(id), fb::ConnectorDeletionStartedT{});
  g.apply(d);
}

inline DocumentReport pending(std::vector<std::string> ids) {
  DocumentReport r;
  r.pending = std::move(ids);
  return r;
}

// The data of the i-th event of a decision as the log's JSON shows it.
inline nlohmann::json event_data(const Given& g, const Decision& d, size_t i) {
  const auto& log = g.log();
  const std::string& bytes = log[log.size() - d.events.size() + i];
  const fb::Event* e = nullptr;
  EXPECT_TRUE(decode_event(bytes, &e).ok());
  return event_data_json(*e);
}

}  // namespace runledger::connectors::testing
