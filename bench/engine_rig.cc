// EngineRig: see engine_rig.h.
#include "bench/engine_rig.h"

namespace runledger::bench {

Status EngineRig::open(const std::string& dir, EngineOptions options, const StoreWrapper& wrap) {
  close();
  std::unique_ptr<EventStore> rocks;
  Status st = open_rocksdb_store(dir, StoreOptions{}, &rocks);
  if (!st.ok()) return st;
  store_ = wrap ? wrap(std::move(rocks)) : std::shared_ptr<EventStore>(std::move(rocks));
  st = Engine::open(store_, clock_, std::move(options), &engine_);
  if (!st.ok()) store_.reset();
  return st;
}

void EngineRig::close() {
  if (engine_) engine_->shutdown();
  engine_.reset();
  store_.reset();  // the last owner: closes RocksDB and frees its LOCK
}

}  // namespace runledger::bench
