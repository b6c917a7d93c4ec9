// EngineRig: see engine_rig.h.
#include "bench/engine_rig.h"

#include <chrono>
#include <thread>

#include "cluster/cluster_node.h"
#include "cluster/pg_store.h"

namespace runledger::bench {

EngineRig::EngineRig() = default;
EngineRig::~EngineRig() { close(); }

// The node's engine on a PgStore over the folder's RocksDB, refusing
// writes until the node leads.
Status EngineRig::open_node(const std::string& dir, const std::string& dsn, EngineOptions options) {
  close();
  std::unique_ptr<EventStore> rocks;
  Status st = open_rocksdb_store(dir, StoreOptions{}, &rocks);
  if (!st.ok()) return st;
  ClusterOptions co;
  co.dsn = dsn;
  co.node_name = "bench";
  co.advertise_url = "http://127.0.0.1:0";
  auto pg = std::make_shared<PgStore>(std::move(rocks), dsn, co.timeout_ms());
  store_ = pg;
  options.refuse_writes = not_leader_reply("");
  st = Engine::open(store_, clock_, std::move(options), &engine_);
  if (!st.ok()) {
    store_.reset();
    return st;
  }
  node_ = std::make_unique<ClusterNode>(*engine_, *pg, co);
  node_->start();
  return Status::Ok();
}

Status EngineRig::open_following(const std::string& dir, const std::string& dsn) {
  return open_node(dir, dsn, EngineOptions{});
}

Status EngineRig::open_on_postgres(const std::string& dir, const std::string& dsn,
                                   EngineOptions options) {
  if (Status st = open_node(dir, dsn, std::move(options)); !st.ok()) return st;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!node_->health().leader) {
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::string why = node_->health().problem;
      close();
      return Status::Unavailable("the engine did not lead the database within 60 s: " + why);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (store_->last_seq() != 0) {
    close();
    return Status::Invalid("the database already holds a log: give the bench an empty database");
  }
  return Status::Ok();
}

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
  if (node_) node_->stop();
  if (engine_) engine_->shutdown();
  if (node_) node_->resign();
  node_.reset();
  engine_.reset();
  store_.reset();  // the last owner: closes RocksDB and frees its LOCK
}

}  // namespace runledger::bench
