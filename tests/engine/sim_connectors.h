// ConnectorFleet: the connectors of the simulation, their operators and
// their sync loops. Operators create connectors (some on a schedule), pause
// and resume them, change schedules, abort syncs and delete connectors. Each
// connector's sync loop starts syncs (or takes over one the schedule
// started), reports documents, succeeds or fails, and learns of an abort
// from its next progress report; a loop that lost its sync reports with the
// old sync id now and then, which must be refused and recorded as ignored.
// Every answer docs/domain.md 2.1 to 2.3 spells out is checked, messages included.
#pragma once

#include <map>
#include <string>

#include "tests/engine/sim_bus.h"

namespace runledger::testing {

class ConnectorFleet {
 public:
  void act(SimBus& bus);

 private:
  struct Loop {
    std::string sync_id;  // the sync this loop runs; empty when none
    int syncs_started = 0;
  };
  struct Info {
    bool found = false;
    std::string status, last_error;
    bool running = false;
    std::string sync_id;
    int64_t last_synced_at_ms = 0;
    int64_t pending_or_running_docs = 0;
  };

  Info look(SimBus& bus, const std::string& id) const;
  void create(SimBus& bus);
  void set_status(SimBus& bus, const std::string& id);
  void set_schedule(SimBus& bus, const std::string& id);
  void abort(SimBus& bus, const std::string& id);
  void remove(SimBus& bus, const std::string& id);
  void sync_loop(SimBus& bus, const std::string& id);
  void start_sync(SimBus& bus, const std::string& id, const Info& before);
  void report(SimBus& bus, const std::string& id, Loop& loop, const Info& before);

  std::map<std::string, Loop> loops_;  // by connector id, the live ones
  int next_connector_ = 0;
};

}  // namespace runledger::testing
