// EngineRig: the engine as runledgerd runs it (RocksDB store in a data
// folder, the system clock, lease and schedule timers on), opened and
// closed by a workload. close() shuts the engine down (final snapshot) and
// releases the store, so the folder can be measured or opened again.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/free_memory.h"
#include "engine/engine.h"

namespace runledger {
class ClusterNode;
class PgStore;
}  // namespace runledger

namespace runledger::bench {

// Wraps the opened store, e.g. to simulate a crash (see CrashStore).
using StoreWrapper =
    std::function<std::shared_ptr<EventStore>(std::unique_ptr<EventStore> rocksdb)>;

class EngineRig {
 public:
  EngineRig();
  ~EngineRig();
  EngineRig(const EngineRig&) = delete;
  EngineRig& operator=(const EngineRig&) = delete;

  Status open(const std::string& dir, EngineOptions options = EngineOptions{},
              const StoreWrapper& wrap = nullptr);
  // The same with the log in PostgreSQL (`dsn`, whose log must be empty):
  // returns once the engine leads it, as a node of a cluster would.
  Status open_on_postgres(const std::string& dir, const std::string& dsn,
                          EngineOptions options = EngineOptions{});
  // A node on the PostgreSQL log that follows it from `dir` (returns at once:
  // the node folds the log on its own thread, and may lead once it expires).
  Status open_following(const std::string& dir, const std::string& dsn);
  void close();
  Engine& engine() { return *engine_; }
  EventStore& store() { return *store_; }

 private:
  Status open_node(const std::string& dir, const std::string& dsn, EngineOptions options);
  SystemClock clock_;
  std::shared_ptr<EventStore> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ClusterNode> node_;  // on PostgreSQL only
  FreeMemoryKeeper free_memory_;       // runledgerd runs one
};

}  // namespace runledger::bench
