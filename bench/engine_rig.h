// EngineRig: the engine as runledgerd runs it (RocksDB store in a data
// folder, the system clock, lease and schedule timers on), opened and
// closed by a workload. close() shuts the engine down (final snapshot) and
// releases the store, so the folder can be measured or opened again.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/engine.h"

namespace runledger::bench {

// Wraps the opened store, e.g. to simulate a crash (see CrashStore).
using StoreWrapper =
    std::function<std::shared_ptr<EventStore>(std::unique_ptr<EventStore> rocksdb)>;

class EngineRig {
 public:
  EngineRig() = default;
  ~EngineRig() { close(); }
  EngineRig(const EngineRig&) = delete;
  EngineRig& operator=(const EngineRig&) = delete;

  Status open(const std::string& dir, EngineOptions options = EngineOptions{},
              const StoreWrapper& wrap = nullptr);
  void close();
  Engine& engine() { return *engine_; }
  EventStore& store() { return *store_; }

 private:
  SystemClock clock_;
  std::shared_ptr<EventStore> store_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace runledger::bench
